package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PlatformUpgradeKind names the resource.
const PlatformUpgradeKind = "PlatformUpgrade"

// PlatformUpgrade takes a platform to a version of its release catalog,
// hop by hop: the controller detects the version the cluster runs, finds
// the path (never skipping a minor unless a release allows it, required
// stops kept, Kubernetes, peers and the compatibility matrix checked) and
// runs each hop's plan as its own UpgradeRun, as `upshift upgrade --to`
// does. It is what the Liqo upgrade controller's LiqoUpgrade
// (targetVersion, autoRollback) does, for any platform with a catalog.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=upshift
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetVersion`
// +kubebuilder:printcolumn:name="Current",type=string,JSONPath=`.status.currentVersion`,description="The version the cluster runs, as the catalog's sources last said"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="For display: read the conditions to decide"
// +kubebuilder:printcolumn:name="Hop",type=string,JSONPath=`.status.hop`,description="The hop running, or where it stopped (2/3)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PlatformUpgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PlatformUpgradeSpec `json:"spec"`
	// +optional
	Status PlatformUpgradeStatus `json:"status,omitempty"`
}

// PlatformUpgradeList is a list of PlatformUpgrades.
//
// +kubebuilder:object:root=true
type PlatformUpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlatformUpgrade `json:"items"`
}

// PlatformUpgradeSpec is where to take the platform.
type PlatformUpgradeSpec struct {
	// TargetVersion is a release of the catalog ("v1.1.0" or "1.1.0").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	TargetVersion string `json:"targetVersion"`
	// Catalog is the platform's release catalog.
	Catalog CatalogSource `json:"catalog"`
	// Values override the catalog's plan-template values (its
	// spec.values names them; another name is refused).
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// AutoRollback: a failed hop rolls back (default true). False: a failed
	// hop stops where it failed, for an operator (every hop's plan runs
	// with autoRollback false).
	// +optional
	AutoRollback *bool `json:"autoRollback,omitempty"`
	// AllowDowngrade allows a target below the running version (one hop).
	// +optional
	AllowDowngrade bool `json:"allowDowngrade,omitempty"`
	// ServiceAccountName is whom the upgrade acts as, in this namespace:
	// it reads the catalog, the version sources and the peers' Secrets,
	// and runs every hop's plan. Empty: the namespace's default
	// ServiceAccount, never the controller's own rights.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Suspend stops the upgrade where it is (the running hop saved as
	// interrupted); false again goes on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Windows are when a hop's stage may start, as an UpgradePlan's
	// spec.windows (each stage with its estimate left in an open window);
	// set, they replace the windows of every hop's plan.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Windows []UpgradeWindow `json:"windows,omitempty"`
}

// CatalogSource locates a release catalog: exactly one field.
//
// +kubebuilder:validation:XValidation:rule=`has(self.configMap) != has(self.url)`,message="set exactly one of configMap and url"
type CatalogSource struct {
	// ConfigMap in the PlatformUpgrade's namespace, holding catalog.yaml
	// and the plans as keys.
	// +optional
	ConfigMap *LocalObjectName `json:"configMap,omitempty"`
	// URL of the catalog file, https:// only; its plans are named
	// relative to it.
	// +optional
	// +kubebuilder:validation:Pattern=`^https://`
	URL string `json:"url,omitempty"`
}

// LocalObjectName names an object in the same namespace.
type LocalObjectName struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PlatformPhase is where an upgrade stands, for display.
type PlatformPhase string

const (
	PlatformPending    PlatformPhase = "Pending"
	PlatformRunning    PlatformPhase = "Running"
	PlatformSucceeded  PlatformPhase = "Succeeded"
	PlatformRolledBack PlatformPhase = "RolledBack" // a hop failed and was rolled back; the hops before it stay done
	PlatformFailed     PlatformPhase = "Failed"     // a hop failed and was not rolled back, or its rollback failed
	PlatformBlocked    PlatformPhase = "Blocked"    // no hop could start: no path, a peer, a preflight (tried again)
	PlatformSuspended  PlatformPhase = "Suspended"
)

// PlatformUpgradeStatus is what the controller observed and did.
type PlatformUpgradeStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the target reached), Reconciling (hops moving),
	// Stalled (a person must act), as an UpgradePlan's.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Phase PlatformPhase `json:"phase,omitempty"`
	// PreviousVersion is the version the cluster ran when the upgrade
	// started.
	// +optional
	PreviousVersion string `json:"previousVersion,omitempty"`
	// CurrentVersion is the version the cluster runs, as the catalog's
	// sources last said.
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`
	// Path are the versions the upgrade stops at, in order.
	// +optional
	Path []string `json:"path,omitempty"`
	// Hop is the hop running, or where the upgrade stopped ("2/3").
	// +optional
	Hop string `json:"hop,omitempty"`
	// Hops are the hops run, in order, each an UpgradeRun in the
	// controller's namespace (upshift report RUN... reports them).
	// +optional
	Hops []HopStatus `json:"hops,omitempty"`
	// Message says why the upgrade is where it is.
	// +optional
	Message string `json:"message,omitempty"`
	// HandledActions maps each action annotation (upshift.dev/approve:
	// approve the approval step the running hop waits at) to the value
	// the controller last acted on.
	// +optional
	HandledActions map[string]string `json:"handledActions,omitempty"`
}

// HopStatus is one hop and its run.
type HopStatus struct {
	// From is empty for an install, or a hop resumed after a restart.
	// +optional
	From  string   `json:"from,omitempty"`
	To    string   `json:"to"`
	Run   string   `json:"run"`
	Phase RunPhase `json:"phase,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}
