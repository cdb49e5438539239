package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpgradePlan moves one cluster to a target version through ordered stages.
type UpgradePlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              UpgradePlanSpec `json:"spec"`
}

// UpgradePlanSpec is what the plan does.
type UpgradePlanSpec struct {
	// Version is the target version the plan reaches.
	Version string `json:"version"`
	// AutoRollback rolls back completed stages when a stage fails. Default true.
	AutoRollback *bool `json:"autoRollback,omitempty"`
	// Stages run in order; each is backed up before and gated after.
	Stages []Stage `json:"stages"`
}

// Stage is a list of steps followed by gates.
type Stage struct {
	Name  string `json:"name"`
	Steps []Step `json:"steps"`
	Gates []Gate `json:"gates,omitempty"`
}

// Step is one action. Exactly one kind field is set (a union, as in
// Kubernetes APIs).
type Step struct {
	Name string `json:"name"`
	// Timeout bounds the step. Default 5m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// DependsOn names steps of the same stage that must succeed first. A
	// stage in which any step sets it runs as a graph: steps start as soon
	// as their dependencies succeed, side by side.
	DependsOn []string `json:"dependsOn,omitempty"`

	CRDs      *CRDsStep      `json:"crds,omitempty"`
	Manifests *ManifestsStep `json:"manifests,omitempty"`
	Image     *ImageStep     `json:"image,omitempty"`
	Helm      *HelmStep      `json:"helm,omitempty"`
	Job       *JobStep       `json:"job,omitempty"`
	Recreate  *RecreateStep  `json:"recreate,omitempty"`
	Approval  *ApprovalStep  `json:"approval,omitempty"`
	Pause     *PauseStep     `json:"pause,omitempty"`
}

// Source locates manifests: exactly one of Path, URL or Inline.
type Source struct {
	// Path is a file or a directory, relative to the plan file.
	Path string `json:"path,omitempty"`
	// URL is fetched over HTTPS (or HTTP).
	URL string `json:"url,omitempty"`
	// CAFile verifies the URL's server, relative to the plan file.
	CAFile string `json:"caFile,omitempty"`
	// InsecureSkipVerify skips verification of the URL's server.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// Inline is a YAML document stream.
	Inline string `json:"inline,omitempty"`
}

// CRDsStep server-side applies CustomResourceDefinitions and waits until
// they are Established.
type CRDsStep struct {
	Source `json:",inline"`
	// MinCount is how many CRDs the source must hold at least.
	MinCount int `json:"minCount,omitempty"`
}

// ManifestsStep server-side applies objects and waits until they are Current.
type ManifestsStep struct {
	Source `json:",inline"`
}

// ImageStep sets container images on one workload and waits for its rollout.
type ImageStep struct {
	// Kind is Deployment, DaemonSet or StatefulSet.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Images maps container name to image.
	Images map[string]string `json:"images"`
}

// Gate is a health check after a stage's steps. Exactly one kind is set.
type Gate struct {
	// Timeout bounds the gate. Default 2m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// Severity: blocking (default) fails the stage; warning is recorded
	// and shown but does not fail it; info is recorded only.
	Severity Severity `json:"severity,omitempty"`

	Ready       *ReadyGate       `json:"ready,omitempty"`
	HTTP        *HTTPGate        `json:"http,omitempty"`
	PodsRunning *PodsRunningGate `json:"podsRunning,omitempty"`
	PVCsBound   *PVCsBoundGate   `json:"pvcsBound,omitempty"`
	NodesReady  *NodesReadyGate  `json:"nodesReady,omitempty"`
	Soak        *SoakGate        `json:"soak,omitempty"`
}

// SoakGate keeps checking the stage's other gates for Duration, every
// Interval (default 5s): any of them failing once fails the stage. The
// gate's timeout does not apply; the soak lasts Duration.
type SoakGate struct {
	Duration metav1.Duration  `json:"duration"`
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// Severity of a gate.
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
	Namespace string `json:"namespace"`
	Selector  string `json:"selector"`
	// MaxRestarts is the restarts any container may have. Default 0,
	// counted from when the gate starts, so restarts before the upgrade do
	// not count.
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
}

// PVCsBoundGate passes when every PersistentVolumeClaim the selector
// matches in the namespace (all of them, when the selector is empty) is
// Bound.
type PVCsBoundGate struct {
	Namespace string `json:"namespace"`
	Selector  string `json:"selector,omitempty"`
}

// NodesReadyGate passes when the nodes the selector matches (all, when
// empty) are Ready: all of them, or at least MinReady.
type NodesReadyGate struct {
	Selector string `json:"selector,omitempty"`
	MinReady *int32 `json:"minReady,omitempty"`
}

// ReadyGate passes when the object (or every object the selector matches)
// is Current by kstatus. A selector that matches nothing fails.
type ReadyGate struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
}

// HTTPGate passes when a GET answers the expected status.
type HTTPGate struct {
	URL          string           `json:"url"`
	ExpectStatus int              `json:"expectStatus,omitempty"`
	Timeout      *metav1.Duration `json:"timeout,omitempty"`
	Interval     *metav1.Duration `json:"interval,omitempty"`
}

// HelmStep installs or upgrades a Helm release through the Helm SDK and
// waits for it; a failed upgrade goes back to the previous revision.
type HelmStep struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Chart is a local chart directory or archive (relative to the plan
	// file), an http(s) URL of a chart archive, an oci:// reference, or,
	// with Repo, a chart's name in that repository.
	Chart string `json:"chart"`
	// Repo is an HTTP chart repository's URL (helm's --repo).
	Repo string `json:"repo,omitempty"`
	// Version of the chart, for oci:// references and repositories
	// (default: the latest).
	Version string `json:"version,omitempty"`
	// Values are inline values, merged over ValuesFiles in order.
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// ValuesFiles are YAML files relative to the plan file.
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// CreateNamespace creates the release's namespace if missing.
	CreateNamespace bool `json:"createNamespace,omitempty"`
}

// JobStep runs a Job (a database migration, say) and waits until it
// completes. The Job's manifest comes from a source; RollbackJob, when
// set, runs on rollback (the down-migration).
type JobStep struct {
	Source `json:",inline"`
	// RollbackJob is the Job run when the stage is rolled back.
	RollbackJob *Source `json:"rollbackJob,omitempty"`
}

// RecreateStep deletes (or annotates) the objects of a kind that match a
// label selector in the namespaces matching a pattern, and waits until they
// are back and Ready: re-created by their owner, or re-applied by Upshift
// from From.
type RecreateStep struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is a name or a pattern with * (e.g. liqo-tenant-*).
	Namespace string `json:"namespace"`
	Selector  string `json:"selector,omitempty"`
	// Mode is delete (default) or annotate (sets
	// upshift.dev/recreated-at on each object, for operators that restart
	// on a change).
	Mode string `json:"mode,omitempty"`
	// From, when set, holds the manifests Upshift applies again after the
	// delete (objects no owner re-creates).
	From *Source `json:"from,omitempty"`
}

// ApprovalStep waits until an operator runs `upshift approve NAME`.
type ApprovalStep struct {
	// Message is shown while the run waits.
	Message string `json:"message,omitempty"`
}

// PauseStep waits a duration. Its deadline is saved, so a resumed run does
// not start the pause over.
type PauseStep struct {
	Duration metav1.Duration `json:"duration"`
}
