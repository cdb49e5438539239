package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
// +kubebuilder:validation:XValidation:rule=`[has(self.crds), has(self.manifests), has(self.image), has(self.helm), has(self.job), has(self.recreate), has(self.freeze), has(self.approval), has(self.pause)].exists(k, k)`,message="set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval or pause",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule=`[has(self.crds), has(self.manifests), has(self.image), has(self.helm), has(self.job), has(self.recreate), has(self.freeze), has(self.approval), has(self.pause)].filter(k, k).size() <= 1`,message="set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval or pause; split this step in two",reason=FieldValueForbidden
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
}

// Source locates manifests: exactly one of Path, URL, Inline, ConfigMap or
// Secret. An empty string counts as unset, as it does for the CLI.
//
// +kubebuilder:validation:XValidation:rule=`[has(self.path) && size(self.path) > 0, has(self.url) && size(self.url) > 0, has(self.inline) && size(self.inline) > 0, has(self.configMap), has(self.secret)].filter(set, set).size() == 1`,message="set exactly one of path, url, inline, configMap or secret"
// +kubebuilder:validation:XValidation:rule=`!(has(self.caFile) && size(self.caFile) > 0 && has(self.insecureSkipVerify) && self.insecureSkipVerify)`,message="set caFile or insecureSkipVerify, not both: caFile verifies the server with that CA, insecureSkipVerify does not verify it at all"
// +kubebuilder:validation:XValidation:rule=`(has(self.url) && size(self.url) > 0) || !((has(self.caFile) && size(self.caFile) > 0) || (has(self.insecureSkipVerify) && self.insecureSkipVerify))`,message="caFile and insecureSkipVerify apply to url only"
type Source struct {
	// Path is a file or a directory, relative to the plan file.
	// +optional
	Path string `json:"path,omitempty"`
	// URL is fetched over HTTPS (over HTTP only with the plan's
	// spec.allowInsecureHTTP or --allow-http-sources).
	// +optional
	URL string `json:"url,omitempty"`
	// CAFile verifies the URL's server, relative to the plan file.
	// +optional
	CAFile string `json:"caFile,omitempty"`
	// InsecureSkipVerify skips verification of the URL's server.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// Inline is a YAML document stream.
	// +optional
	Inline string `json:"inline,omitempty"`
	// ConfigMap is a ConfigMap in the plan's namespace (for the CLI, the
	// plan file's metadata.namespace, else "default"), read when the run
	// starts with the credentials the plan acts with: its key, or every
	// key (data and binaryData) in key order, joined as a YAML stream.
	// +optional
	ConfigMap *ObjectKeyRef `json:"configMap,omitempty"`
	// Secret is a Secret in the plan's namespace, read as ConfigMap is.
	// +optional
	Secret *ObjectKeyRef `json:"secret,omitempty"`
}

// ObjectKeyRef names a ConfigMap or a Secret in the plan's namespace and,
// optionally, one of its keys.
type ObjectKeyRef struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key of the object's data. Empty: every key, in key order.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]*$`
	// +optional
	Key string `json:"key,omitempty"`
}

// CRDsStep server-side applies CustomResourceDefinitions and waits until
// they are Established.
type CRDsStep struct {
	Source `json:",inline"`
	// MinCount is how many CRDs the source must hold at least.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinCount int `json:"minCount,omitempty"`
}

// ManifestsStep server-side applies objects and waits until they are Current.
type ManifestsStep struct {
	Source `json:",inline"`
}

// ImageStep sets container images on one workload and waits for its rollout.
type ImageStep struct {
	// Kind is Deployment, DaemonSet or StatefulSet.
	// +kubebuilder:validation:Enum=Deployment;DaemonSet;StatefulSet
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Images maps container name to image.
	// +kubebuilder:validation:MinProperties=1
	Images map[string]string `json:"images"`
}

// Gate is a health check after a stage's steps. Exactly one kind is set.
//
// +kubebuilder:validation:XValidation:rule=`[has(self.ready), has(self.http), has(self.podsRunning), has(self.pvcsBound), has(self.nodesReady), has(self.helmReleases), has(self.envKept), has(self.soak)].filter(k, k).size() == 1`,message="set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept or soak"
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

// HelmStep installs or upgrades a Helm release through the Helm SDK and
// waits for it; a failed upgrade goes back to the previous revision.
type HelmStep struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=53
	Release string `json:"release"`
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// Chart is a local chart directory or archive (relative to the plan
	// file), an http(s) URL of a chart archive, an oci:// reference, or,
	// with Repo, a chart's name in that repository.
	// +kubebuilder:validation:MinLength=1
	Chart string `json:"chart"`
	// Repo is an HTTP chart repository's URL (helm's --repo).
	// +optional
	Repo string `json:"repo,omitempty"`
	// Version of the chart, for oci:// references and repositories
	// (default: the latest).
	// +optional
	Version string `json:"version,omitempty"`
	// Values are inline values, merged over ValuesFiles and ValuesFrom:
	// a map, as in values.yaml.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// ValuesFiles are YAML files relative to the plan file.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// ValuesFrom are values in ConfigMaps and Secrets of the plan's
	// namespace, as Flux's HelmRelease spec.valuesFrom: merged in order
	// over ValuesFiles, under Values. They are read when the run starts,
	// with the credentials the plan acts with, and kept with the run.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`
	// CreateNamespace creates the release's namespace if missing.
	// +optional
	CreateNamespace bool `json:"createNamespace,omitempty"`
}

// ValuesReference is a key of a ConfigMap or a Secret that holds Helm
// values (a YAML map), as in Flux's HelmRelease.
type ValuesReference struct {
	// Kind is ConfigMap or Secret.
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// Name of the object, in the plan's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// ValuesKey is the key holding the values. Default values.yaml.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]*$`
	// +optional
	ValuesKey string `json:"valuesKey,omitempty"`
	// Optional: a missing object or key is skipped instead of failing.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// DefaultValuesKey is the key a ValuesReference reads without ValuesKey.
const DefaultValuesKey = "values.yaml"

// JobStep runs a Job (a database migration, say) and waits until it
// completes. The Job's manifest comes from a source; RollbackJob, when
// set, runs on rollback (the down-migration).
type JobStep struct {
	Source `json:",inline"`
	// RollbackJob is the Job run when the stage is rolled back.
	// +optional
	RollbackJob *Source `json:"rollbackJob,omitempty"`
}

// RecreateStep deletes (or annotates) the objects of a kind that match a
// label selector in the namespaces matching a pattern, and waits until they
// are back and Ready: re-created by their owner, or re-applied by Upshift
// from From.
type RecreateStep struct {
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Namespace is a name or a pattern with * (e.g. liqo-tenant-*).
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// Mode is delete (default) or annotate (sets
	// upshift.dev/recreated-at on each object, for operators that restart
	// on a change).
	// +kubebuilder:validation:Enum=delete;annotate
	// +optional
	Mode string `json:"mode,omitempty"`
	// From, when set, holds the manifests Upshift applies again after the
	// delete (objects no owner re-creates).
	// +optional
	From *Source `json:"from,omitempty"`
}

// FreezeStep denies chosen API operations (Liqo's new peerings and
// offloads, say) to everyone for the rest of the run, with a
// ValidatingAdmissionPolicy and its binding (no webhook). The freeze is
// lifted when the run ends, whatever the outcome (succeeded, failed,
// rolled back, aborted); a rollback of its stage removes it too. It never
// applies in the namespace of Upshift's run records.
type FreezeStep struct {
	// Rules are the operations denied.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Rules []FreezeRule `json:"rules"`
	// Namespaces, when set, limit the freeze to objects in these
	// namespaces (and to these Namespace objects themselves); objects of
	// cluster-scoped kinds are frozen wherever they are, as Kubernetes'
	// namespaceSelector does. Empty: every namespace.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// Message is what a denied request reads (one line). Default: that
	// Upshift froze it for the run, until the run ends.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// FreezeRule names the operations a freeze denies on some resources, as
// a ValidatingAdmissionPolicy's resource rules do (every version).
type FreezeRule struct {
	// APIGroups of the resources: "" is the core group (configmaps,
	// secrets), "*" every group.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	APIGroups []string `json:"apiGroups"`
	// Resources are plural resource names (configmaps, foreignclusters),
	// "*" for all of the groups', "pods/exec" for a subresource.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	Resources []string `json:"resources"`
	// Operations denied: CREATE, UPDATE, DELETE or CONNECT.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Enum=CREATE;UPDATE;DELETE;CONNECT
	Operations []string `json:"operations"`
}

// ApprovalStep waits until an operator runs `upshift approve NAME`.
type ApprovalStep struct {
	// Message is shown while the run waits.
	// +optional
	Message string `json:"message,omitempty"`
}

// PauseStep waits a duration. Its deadline is saved, so a resumed run does
// not start the pause over.
type PauseStep struct {
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="use a Go duration such as 30s, 5m or 1h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) > duration('0s')`,message="must be a positive duration such as 30s or 5m"
	Duration metav1.Duration `json:"duration"`
}
