package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// HelmUninstallStep removes one Helm release, keeping its history (helm
// uninstall --keep-history), so a rollback brings it back on the
// revision it had: what embedded-cluster does with an extension a
// release drops. A release that is not installed is left as it is.
type HelmUninstallStep struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=53
	Release string `json:"release"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
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
