package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterVersionKind names the resource.
const ClusterVersionKind = "ClusterVersion"

// ClusterVersion rolls a fleet of clusters to their versions through an
// ops plugin, one cluster (or one slot of a wave) at a time: service out,
// control plane, node pools one by one, health, service in, never letting
// fewer than requiredAvailableCount of the other clusters serve. It is the
// multicluster upgrade operator's ClusterVersion (its fields named as
// there: clusters[].id and version, opsEndpoint, requiredAvailableCount)
// with waves, soak and approval between them, and a rollout that halts or
// reverts the clusters it did when one fails.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=upshift,shortName=cv
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desired`,description="Clusters in the fleet"
// +kubebuilder:printcolumn:name="Done",type=integer,JSONPath=`.status.done`,description="Clusters at their version and in service"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.available`,description="Clusters in service and available, as the plugin last said"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="For display: read the conditions to decide"
// +kubebuilder:printcolumn:name="Wave",type=string,JSONPath=`.status.wave`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterVersionSpec `json:"spec"`
	// +optional
	Status ClusterVersionStatus `json:"status,omitempty"`
}

// ClusterVersionList is a list of ClusterVersions.
//
// +kubebuilder:object:root=true
type ClusterVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterVersion `json:"items"`
}

// ClusterVersionSpec is the fleet and the versions its clusters should run.
//
// +kubebuilder:validation:XValidation:rule=`self.clusters.size() > self.requiredAvailableCount`,message="requiredAvailableCount must be below the number of clusters, or no cluster could ever be taken out of service"
type ClusterVersionSpec struct {
	// Clusters in the order they are upgraded (within a wave), each with
	// the Kubernetes version its control plane and node pools should run.
	// At most 400: a larger fleet is several ClusterVersions.
	//
	// Why 400: the object, spec and status, must stay well under etcd's
	// 1.5 MiB request limit, or a status save fails. A cluster at its
	// largest plausible size takes 2,738 bytes as stored (measured by
	// TestFleetStatusAtItsLargestFits): its status entry 2,286 (id 160
	// bytes, wave 63, five node pools of 40-byte ids and 32-byte
	// versions, twice with the previous versions, an operation of a
	// 128-byte id and 32-byte type, progress 64 and message 256, both cut
	// there by the controller, a member run) plus its spec entry and its
	// managedFields line, about 450. 400 × 2,738 = 1,095,200 bytes, with
	// the fleet's own fields about 1.05 MiB: 70% of 1.5 MiB, under the
	// 1.25 MiB past which the controller starts no operation (so no save
	// fails for size after a plugin call).
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=400
	Clusters []FleetCluster `json:"clusters"`
	// OpsEndpoint is the ops plugin that operates the clusters.
	OpsEndpoint OpsEndpoint `json:"opsEndpoint"`
	// RequiredAvailableCount is how many of the other clusters must be
	// available before one is taken out of service (default 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	RequiredAvailableCount int32 `json:"requiredAvailableCount,omitempty"`
	// Waves group the clusters: a wave starts when the one before it is
	// done, soaked and approved. A cluster belongs to the first wave that
	// names or selects it; every cluster must belong to one. No waves: one
	// wave of all clusters, one at a time, as the multicluster upgrade
	// operator does.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Waves []Wave `json:"waves,omitempty"`
	// OnFailure is what a failed operation does to the rollout: Halt (the
	// default) stops where it is, the failed cluster left as the plugin
	// left it, for an operator; Revert takes the clusters this rollout
	// changed back to the versions they ran before it, last first.
	// +kubebuilder:default=Halt
	// +optional
	OnFailure FailurePolicy `json:"onFailure,omitempty"`
	// ServiceAccountName is whom the controller acts as, in this
	// namespace, to read opsEndpoint.tlsSecretRef. Empty: the
	// namespace's default ServiceAccount, never the controller's own
	// rights.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Suspend stops starting operations; those in flight are followed to
	// their end. False again goes on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Member is what runs on each member cluster once its node pools run
	// their version and it is available, before it goes back in service:
	// a platform plan and health checks, with Upshift's engine, through
	// the cluster's kubeconfig Secret (clusters[].kubeconfigSecretRef).
	// +optional
	Member *FleetMemberSpec `json:"member,omitempty"`
}

// FleetCluster is one cluster of the fleet.
type FleetCluster struct {
	// ID is the plugin's name for the cluster (for GKE,
	// projects/P/locations/L/clusters/C).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id"`
	// Version is the Kubernetes version its control plane and every node
	// pool should run, as the plugin spells it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Version string `json:"version"`
	// Labels, for the waves' selectors.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// KubeconfigSecretRef is the Secret, in this namespace, holding a
	// kubeconfig of the cluster, for spec.member. Default: Secret
	// <id>-kubeconfig, key value (Cluster API's, so its clusters need
	// nothing set).
	// +optional
	KubeconfigSecretRef *KubeconfigSecretRef `json:"kubeconfigSecretRef,omitempty"`
}

// OpsEndpoint is how to reach the ops plugin: gRPC over TLS, verified,
// unless insecure is set.
//
// +kubebuilder:validation:XValidation:rule=`!(has(self.insecure) && self.insecure && has(self.tlsSecretRef))`,message="insecure sends in plain text: remove tlsSecretRef, or set insecure to false"
type OpsEndpoint struct {
	// Endpoint is the plugin's host:port.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Endpoint string `json:"endpoint"`
	// Insecure talks to the plugin in plain text. Only when set.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// TLSSecretRef names a Secret in this namespace: ca.crt (the CA that
	// signed the plugin's certificate; without it the system's roots),
	// and tls.crt with tls.key for mutual TLS.
	// +optional
	TLSSecretRef *LocalObjectName `json:"tlsSecretRef,omitempty"`
	// ServerName the plugin's certificate must be valid for (default: the
	// endpoint's host).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`
}

// Wave is a group of clusters upgraded together, within its own limits.
//
// +kubebuilder:validation:XValidation:rule=`has(self.clusters) || has(self.selector)`,message="a wave names its clusters or selects them: set clusters or selector"
type Wave struct {
	// Name, for status and for the approval (upshift.dev/approve=NAME).
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Clusters by id.
	// +kubebuilder:validation:MaxItems=400
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// Selector over the clusters' labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// MaxConcurrency is how many clusters of the wave are upgraded at once
	// (default 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxConcurrency int32 `json:"maxConcurrency,omitempty"`
	// MaxUnavailable is how many clusters of the wave may be out of
	// service or unavailable at once, for any reason, before another is
	// started (default: maxConcurrency).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxUnavailable *int32 `json:"maxUnavailable,omitempty"`
	// Soak is how long the wave's clusters serve, all in service, before
	// the next wave starts.
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`
	// Approval: after the soak, the next wave waits for
	// upshift.dev/approve=NAME on the ClusterVersion.
	// +optional
	Approval bool `json:"approval,omitempty"`
}

// FailurePolicy is what a failed operation does to a rollout.
// +kubebuilder:validation:Enum=Halt;Revert
type FailurePolicy string

const (
	FailureHalt   FailurePolicy = "Halt"
	FailureRevert FailurePolicy = "Revert"
)

// FleetPhase is where a rollout stands, for display.
type FleetPhase string

const (
	FleetProgressing        FleetPhase = "Progressing"
	FleetSoaking            FleetPhase = "Soaking"
	FleetWaitingForApproval FleetPhase = "WaitingForApproval"
	FleetSucceeded          FleetPhase = "Succeeded"
	FleetHalted             FleetPhase = "Halted"    // an operation failed; an operator acts (retry, or edit)
	FleetReverting          FleetPhase = "Reverting" // an operation failed; the clusters done go back
	FleetReverted           FleetPhase = "Reverted"
	FleetRevertFailed       FleetPhase = "RevertFailed" // a revert's operation failed; an operator acts (retry, or edit)
	FleetSuspended          FleetPhase = "Suspended"
)

// ClusterVersionStatus is what the controller observed and did.
type ClusterVersionStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (every cluster at its version and in service),
	// Reconciling (the rollout moves), Stalled (a person must act),
	// WaitingForApproval, PluginReachable (False: the ops plugin does not
	// answer, and the message names the clusters it left out of service;
	// True with reason PluginAnsweredError: it answered errors about some
	// clusters, named with its code and message, which wait).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Phase FleetPhase `json:"phase,omitempty"`
	// Desired, Done and Available count the clusters: all of them, those
	// at their version and in service, those serving.
	// +optional
	Desired int32 `json:"desired"`
	// +optional
	Done int32 `json:"done"`
	// +optional
	Available int32 `json:"available"`
	// Wave is the wave rolling, soaking or waiting for its approval.
	// +optional
	Wave string `json:"wave,omitempty"`
	// WaveDoneAt is when the wave's last cluster went back in service
	// (its soak counts from then).
	// +optional
	WaveDoneAt *metav1.Time `json:"waveDoneAt,omitempty"`
	// Message says why the rollout is where it is.
	// +optional
	Message string `json:"message,omitempty"`
	// Cause is the failure that halted or reverted this rollout.
	// +optional
	Cause string `json:"cause,omitempty"`
	// Target is a digest of what this rollout moves the fleet to: its
	// clusters and each one's version. An edit that leaves it as it is
	// (a suspend, a wave's limits, onFailure) goes on with the rollout
	// and keeps its record; a new target starts a new rollout.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Target string `json:"target,omitempty"`
	// Clusters, in spec order. Atomic: the controller is the only writer
	// (JSON patches of the lines that changed), and tracking a thousand
	// lines as map entries made the API server's field management the
	// largest cost of storing a fleet's status. As many as
	// spec.clusters (see its MaxItems).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=400
	// +optional
	Clusters []FleetClusterStatus `json:"clusters,omitempty"`
	// HandledActions maps each action annotation (upshift.dev/approve,
	// upshift.dev/retry) to the value the controller last acted on.
	// +optional
	HandledActions map[string]string `json:"handledActions,omitempty"`
}

// ClusterPhase is where one cluster stands in the rollout.
type ClusterPhase string

const (
	ClusterPending   ClusterPhase = "Pending"
	ClusterUpgrading ClusterPhase = "Upgrading"
	ClusterDone      ClusterPhase = "Done"
	ClusterFailed    ClusterPhase = "Failed"
	ClusterReverting ClusterPhase = "Reverting"
	ClusterReverted  ClusterPhase = "Reverted"
)

// FleetClusterStatus is one cluster as the controller last saw it.
type FleetClusterStatus struct {
	ID string `json:"id"`
	// +optional
	Wave string `json:"wave,omitempty"`
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`
	// Master is the control plane's version.
	// +optional
	Master string `json:"master,omitempty"`
	// NodePools and their versions.
	// +listType=map
	// +listMapKey=id
	// +optional
	NodePools []NodePoolStatus `json:"nodePools,omitempty"`
	// Previous are the versions the cluster ran before this rollout
	// changed it: where a revert takes it back.
	// +optional
	Previous *RecordedVersions `json:"previous,omitempty"`
	// InService: the cluster is routed to.
	// +optional
	InService bool `json:"inService"`
	// Available: the plugin says it could serve.
	// +optional
	Available bool `json:"available"`
	// Operation is the plugin's operation in flight: a restarted
	// controller asks about it instead of starting another.
	// +optional
	Operation *PluginOperation `json:"operation,omitempty"`
	// Member is the run of spec.member on the cluster in this rollout.
	// +optional
	Member *MemberRun `json:"member,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// NodePoolStatus is one node pool's version.
type NodePoolStatus struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// RecordedVersions are a cluster's versions at one moment.
type RecordedVersions struct {
	Master string `json:"master"`
	// +listType=map
	// +listMapKey=id
	// +optional
	NodePools []NodePoolStatus `json:"nodePools,omitempty"`
}

// FleetAction is what an operation does to a cluster.
// +kubebuilder:validation:Enum=ServiceOut;UpgradeMaster;UpgradeNodePool;UpgradeMember;RollbackMember;ServiceIn;Revert
type FleetAction string

const (
	ActionServiceOut      FleetAction = "ServiceOut"
	ActionUpgradeMaster   FleetAction = "UpgradeMaster"
	ActionUpgradeNodePool FleetAction = "UpgradeNodePool"
	ActionServiceIn       FleetAction = "ServiceIn"
	ActionRevert          FleetAction = "Revert"
	// ActionUpgradeMember runs spec.member on the cluster; the controller
	// does it, not the plugin. ActionRollbackMember rolls that run back
	// in a revert.
	ActionUpgradeMember  FleetAction = "UpgradeMember"
	ActionRollbackMember FleetAction = "RollbackMember"
)

// PluginOperation is an operation a plugin started.
type PluginOperation struct {
	// ID and Type as the plugin returned them; empty while the call that
	// starts it has not answered (or its answer was lost: the controller
	// then looks the operation up by RequestID before anything else).
	// +optional
	ID string `json:"id,omitempty"`
	// +optional
	Type string `json:"type,omitempty"`
	// RequestID is the id the call was sent with, saved before the call
	// (pluginsdk.RequestIDKey).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RequestID string `json:"requestID,omitempty"`
	// Action is the call that started it.
	Action FleetAction `json:"action"`
	// NodePool, for UpgradeNodePool.
	// +optional
	NodePool string `json:"nodePool,omitempty"`
	// Version the call asked for (empty for service in and out).
	// +optional
	Version   string      `json:"version,omitempty"`
	StartedAt metav1.Time `json:"startedAt"`
	// Progress as the plugin reports it ("3/5 nodes"), when it does.
	// +optional
	Progress string `json:"progress,omitempty"`
}
