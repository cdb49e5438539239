package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Gate is a health check after a stage's steps. Exactly one kind is set.
//
// +kubebuilder:validation:XValidation:rule=`[has(self.ready), has(self.http), has(self.podsRunning), has(self.pvcsBound), has(self.nodesReady), has(self.helmReleases), has(self.envKept), has(self.soak), has(self.metric)].filter(k, k).size() == 1`,message="set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric"
type Gate struct {
	// Timeout bounds the gate. Default 2m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// Severity: blocking (default) fails the stage; warning is recorded
	// and shown but does not fail it; info is recorded only.
	// +optional
	Severity Severity `json:"severity,omitempty"`

	// +optional
	Ready *ReadyGate `json:"ready,omitempty"`
	// +optional
	HTTP *HTTPGate `json:"http,omitempty"`
	// +optional
	PodsRunning *PodsRunningGate `json:"podsRunning,omitempty"`
	// +optional
	PVCsBound *PVCsBoundGate `json:"pvcsBound,omitempty"`
	// +optional
	NodesReady *NodesReadyGate `json:"nodesReady,omitempty"`
	// +optional
	HelmReleases *HelmReleasesGate `json:"helmReleases,omitempty"`
	// +optional
	EnvKept *EnvKeptGate `json:"envKept,omitempty"`
	// +optional
	Soak *SoakGate `json:"soak,omitempty"`
	// Metric measures a metric until its count is reached or a limit is
	// passed (the app layer's analysis, on a platform's stage): failed,
	// in error or inconclusive, it fails the gate.
	// +optional
	Metric *Metric `json:"metric,omitempty"`
}

// SoakGate keeps checking the stage's other gates for Duration, every
// Interval (default 5s): any of them failing once fails the stage. The
// gate's timeout does not apply; the soak lasts Duration.
type SoakGate struct {
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	Duration metav1.Duration `json:"duration"`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// Severity of a gate.
//
// +kubebuilder:validation:Enum=blocking;warning;info
type Severity string

const (
	SeverityBlocking Severity = "blocking"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// PodsRunningGate passes when every pod the selector matches in the
// namespace is Running and Ready, none is in CrashLoopBackOff, and none
// restarted more than MaxRestarts times. A selector that matches nothing
// fails.
type PodsRunningGate struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Selector string `json:"selector"`
	// MaxRestarts is the restarts any container may have. Default 0,
	// counted from when the gate starts, so restarts before the upgrade do
	// not count.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
}

// PVCsBoundGate passes when every PersistentVolumeClaim the selector
// matches in the namespace (all of them, when the selector is empty) is
// Bound.
type PVCsBoundGate struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +optional
	Selector string `json:"selector,omitempty"`
}

// NodesReadyGate passes when the nodes the selector matches (all, when
// empty) are Ready: all of them, or at least MinReady.
type NodesReadyGate struct {
	// +optional
	Selector string `json:"selector,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReady *int32 `json:"minReady,omitempty"`
}

// EnvKeptGate passes when a container of a workload has the environment
// variables it had before the stage: each of Names (every variable, when
// Names is empty) with the same value, or the same valueFrom, as the
// stage's backup holds the workload. It belongs in the stage whose steps
// change the workload: only that stage's backup holds it (preflight
// refuses it elsewhere). A rollback of the stage verifies the same
// variables. Messages name the variables and how they changed, never
// their values.
type EnvKeptGate struct {
	// Kind is Deployment, DaemonSet or StatefulSet.
	// +kubebuilder:validation:Enum=Deployment;DaemonSet;StatefulSet
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Container is the name of a container (or init container) of the
	// workload's pod template.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Container string `json:"container"`
	// Names are the variables that must be kept, e.g. POD_NAMESPACE,
	// CLUSTER_ID. Empty: every variable the container had or has.
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Names []string `json:"names,omitempty"`
}

// ReadyGate passes when the object (or every object the selector matches)
// is Current by kstatus. A selector that matches nothing fails.
//
// +kubebuilder:validation:XValidation:rule=`(has(self.name) && size(self.name) > 0) != (has(self.selector) && size(self.selector) > 0)`,message="set exactly one of name or selector"
type ReadyGate struct {
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// IfServed: when the cluster does not serve the kind (its CRD is not
	// installed), the gate passes with nothing to check, as "Flux
	// HelmReleases Ready, where Flux is installed".
	// +optional
	IfServed bool `json:"ifServed,omitempty"`
}

// HelmReleasesGate passes when every Helm release of the namespace (or
// every one named) is deployed: its latest revision, not failed nor
// pending an operation.
type HelmReleasesGate struct {
	// Namespace holds the releases; empty: every namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Names are the releases to check; empty: every release found (and
	// none found passes).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Names []string `json:"names,omitempty"`
}

// HTTPGate passes when a GET answers the expected status.
type HTTPGate struct {
	// +kubebuilder:validation:MinLength=1
	URL string `json:"url"`
	// +optional
	ExpectStatus int `json:"expectStatus,omitempty"`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}
