package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// UpgradePlan moves one cluster to a target version through ordered stages.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=upshift
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`,description="The version this plan reaches"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The phase of the plan's run, for display: read the conditions to decide"
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`,description="The stage the run is at, or stopped at"
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.step`,description="The step or gate the run is at, or stopped at"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type UpgradePlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              UpgradePlanSpec `json:"spec"`
	// Status is written by the controller; the CLI ignores it.
	// +optional
	Status UpgradePlanStatus `json:"status,omitempty"`
}

// UpgradePlanList is a list of UpgradePlans.
//
// +kubebuilder:object:root=true
type UpgradePlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UpgradePlan `json:"items"`
}

// UpgradePlanSpec is what the plan does.
//
// Step names are unique across the plan (approvals and the run record
// name steps by name alone). The rule compares the steps of every pair of
// stages; the bounds on stages and steps keep its cost within what the
// API server accepts.
//
// +kubebuilder:validation:XValidation:rule=`self.stages.all(a, self.stages.all(b, a.name == b.name || !sets.intersects(a.steps.map(x, x.name), b.steps.map(y, y.name))))`,message="give each step its own name, unique across the plan"
type UpgradePlanSpec struct {
	// Version is the target version the plan reaches.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Version string `json:"version"`
	// AutoRollback rolls back completed stages when a stage fails. Default true.
	// +optional
	AutoRollback *bool `json:"autoRollback,omitempty"`
	// ServiceAccountName is the ServiceAccount, in the plan's namespace,
	// whose rights the controller runs the plan with (it impersonates
	// it), as Flux's spec.serviceAccountName. Empty: the namespace's
	// "default" ServiceAccount, so a plan never borrows the controller's
	// own rights. The CLI accepts it and runs with the credentials it is
	// given.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Suspend, when true, tells the controller not to start the plan's
	// run nor move it on, as Flux's spec.suspend. The CLI accepts it and
	// runs the plan regardless.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Windows are when a stage may start: one of them must be open, with
	// at least the time the stage took in past runs left (its estimate,
	// as upshift plan shows it); a stage never run before needs only an
	// open window. A stage that may not start waits for the next window
	// long enough (the CLI stops, exit 4; the controller waits). A stage
	// started finishes, and a rollback runs, whatever the time. Empty:
	// any time.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Windows []UpgradeWindow `json:"windows,omitempty"`
	// AllowInsecureHTTP lets the plan's url sources, helm charts and
	// chart repositories be fetched over plain http://, which anyone on
	// the way can change; without it (or the controller's, the server's
	// or the CLI's --allow-http-sources) they are refused before
	// anything changes. Redirects are followed to the same host only,
	// and never from https:// to http://.
	// +optional
	AllowInsecureHTTP bool `json:"allowInsecureHTTP,omitempty"`
	// Checks are the cluster's health before any change (a runbook's
	// success criteria: nodes Ready, no crash-looping pods, PVCs Bound,
	// releases Ready), gates checked once when a run starts, before its
	// first backup, not when it resumes. A blocking check that fails
	// refuses the run with nothing changed; a warning one is shown and
	// the run goes on; an info one is shown only. A soak is not a check.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule=`self.all(g, !has(g.soak) && !has(g.envKept))`,message="a soak or an envKept gate is not a check: put it in a stage's gates"
	Checks []Gate `json:"checks,omitempty"`
	// Stages run in order; each is backed up before and gated after.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Stages []Stage `json:"stages"`
}

// Stage is a list of steps followed by gates.
//
// +kubebuilder:validation:XValidation:rule=`self.steps.all(s, !has(s.dependsOn) || (!(s.name in s.dependsOn) && sets.contains(self.steps.map(o, o.name), s.dependsOn)))`,message="dependsOn names steps of the same stage, other than the step itself"
type Stage struct {
	// Name is unique across the plan: a run records progress by stage name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Steps []Step `json:"steps"`
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Gates []Gate `json:"gates,omitempty"`
}

// Step is one action. Exactly one kind field is set (a union, as in
// Kubernetes APIs).
//
// +kubebuilder:validation:XValidation:rule=`[has(self.crds), has(self.manifests), has(self.image), has(self.helm), has(self.job), has(self.recreate), has(self.freeze), has(self.approval), has(self.pause), has(self.autopilot), has(self.distribute), has(self.clusterConfig), has(self.installation), has(self.helmUninstall)].exists(k, k)`,message="set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule=`[has(self.crds), has(self.manifests), has(self.image), has(self.helm), has(self.job), has(self.recreate), has(self.freeze), has(self.approval), has(self.pause), has(self.autopilot), has(self.distribute), has(self.clusterConfig), has(self.installation), has(self.helmUninstall)].filter(k, k).size() <= 1`,message="set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall; split this step in two",reason=FieldValueForbidden
type Step struct {
	// Name is unique across the plan.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Timeout bounds the step. Default 5m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// DependsOn names steps of the same stage that must succeed first. A
	// stage in which any step sets it runs as a graph: steps start as soon
	// as their dependencies succeed, side by side.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`

	// +optional
	CRDs *CRDsStep `json:"crds,omitempty"`
	// +optional
	Manifests *ManifestsStep `json:"manifests,omitempty"`
	// +optional
	Image *ImageStep `json:"image,omitempty"`
	// +optional
	Helm *HelmStep `json:"helm,omitempty"`
	// +optional
	Job *JobStep `json:"job,omitempty"`
	// +optional
	Recreate *RecreateStep `json:"recreate,omitempty"`
	// +optional
	Freeze *FreezeStep `json:"freeze,omitempty"`
	// +optional
	Approval *ApprovalStep `json:"approval,omitempty"`
	// +optional
	Pause *PauseStep `json:"pause,omitempty"`
	// +optional
	Autopilot *AutopilotStep `json:"autopilot,omitempty"`
	// +optional
	Distribute *DistributeStep `json:"distribute,omitempty"`
	// +optional
	ClusterConfig *ClusterConfigStep `json:"clusterConfig,omitempty"`
	// +optional
	Installation *InstallationStep `json:"installation,omitempty"`
	// +optional
	HelmUninstall *HelmUninstallStep `json:"helmUninstall,omitempty"`
}
