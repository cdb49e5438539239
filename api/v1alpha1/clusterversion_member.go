package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// FleetMemberSpec is what runs on each member cluster after its node
// pools, before its service in: a plan, then health checks, as one run of
// Upshift's engine whose record and lease live on the member cluster.
//
// +kubebuilder:validation:XValidation:rule=`has(self.plan) || has(self.healthChecks)`,message="set plan, healthChecks or both (or remove member)"
// +kubebuilder:validation:XValidation:rule=`!has(self.plan) || !has(self.plan.serviceAccountName) || size(self.plan.serviceAccountName) == 0`,message="a member plan acts with its cluster's kubeconfig: remove plan.serviceAccountName"
// +kubebuilder:validation:XValidation:rule=`!has(self.plan) || !has(self.plan.suspend) || !self.plan.suspend`,message="suspend the ClusterVersion (spec.suspend), not its member plan: remove plan.suspend"
type FleetMemberSpec struct {
	// Plan is an UpgradePlan's spec, run on each member cluster. Its
	// ConfigMap and Secret sources are read on the member cluster, in
	// the runs namespace.
	// +optional
	Plan *UpgradePlanSpec `json:"plan,omitempty"`
	// HealthChecks must hold on each member cluster before it goes back
	// in service: gates after the plan's last stage (without a plan, a
	// run of its own). A blocking one that fails fails the cluster.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	HealthChecks []Gate `json:"healthChecks,omitempty"`
}

// KubeconfigSecretRef names a key of a Secret holding a kubeconfig.
type KubeconfigSecretRef struct {
	// Name of the Secret, in the ClusterVersion's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key of the Secret's data holding the kubeconfig (default value).
	// +kubebuilder:default=value
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	Key string `json:"key,omitempty"`
}

// MemberRun is spec.member's run on one cluster, as this rollout last
// saw it; the run itself is in the member cluster's run store.
type MemberRun struct {
	// Run names the UpgradeRun on the member cluster.
	Run string `json:"run"`
	// Phase is Succeeded, Failed or RolledBack.
	Phase RunPhase `json:"phase"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}
