package catalog

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Kind is the catalog document's kind; its apiVersion is upshift.dev/v1alpha1.
const Kind = "ReleaseCatalog"

// ReleaseCatalog is a platform's releases and how to upgrade to each. It
// is a document Upshift reads, not a resource the API server serves.
type ReleaseCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec"`
}

// Spec is the catalog's content.
type Spec struct {
	// Detect lists where the running version is read. Every source must
	// give the same version; sources that disagree are reported, never
	// guessed between.
	Detect []VersionSource `json:"detect,omitempty"`
	// PlanTemplate is the plan of every release that names none: a file
	// of the catalog (a key of its ConfigMap) holding an UpgradePlan as a
	// Go template (see TemplateData).
	PlanTemplate string `json:"planTemplate,omitempty"`
	// Values are the plan template's settings and their defaults
	// ({{ .Values.crdsURL }}): a driver may override each (upshift's
	// --set, a PlatformUpgrade's spec.values), and a name the catalog
	// does not declare is refused, so a typo never silently keeps the
	// default. For instance where a release's CRDs are fetched, with a
	// local mirror as the override.
	Values map[string]string `json:"values,omitempty"`
	// ValuesFrom read values from the cluster, over their defaults and
	// under a driver's overrides: which of embedded-cluster's components
	// a cluster has is in its Installation (airGap, highAvailability,
	// the license's disaster recovery), as embedded-cluster reads it.
	ValuesFrom []ValueSource `json:"valuesFrom,omitempty"`
	// Peers are the other clusters the platform works with (Liqo's
	// peerings): every one's version must be within the range of every
	// release an upgrade stops at (Release.Peers).
	Peers *Peers `json:"peers,omitempty"`
	// Compatibility is a matrix of the versions an upgrade may reach from
	// the lowest version among the cluster and its peers.
	Compatibility *Compatibility `json:"compatibility,omitempty"`
	// Releases are the versions the platform can be upgraded to.
	Releases []Release `json:"releases"`
}

// Peers says where the peer clusters' kubeconfigs are and how their
// versions are read.
type Peers struct {
	// KubeconfigSecrets are Secrets of the cluster upgraded, one per peer,
	// each holding a kubeconfig to read the peer with.
	KubeconfigSecrets KubeconfigSecrets `json:"kubeconfigSecrets"`
	// Detect reads a peer's version; empty: spec.detect. For Liqo, the
	// controller-manager's image tag (Liqo's API records no peer version).
	Detect []VersionSource `json:"detect,omitempty"`
	// Expected finds the peers the cluster itself knows (Liqo's
	// ForeignClusters): each needs a kubeconfig Secret, or its skew
	// cannot be checked. Without it, only the Secrets say who the peers
	// are, and a peer nobody made a Secret for goes unchecked.
	Expected *ExpectedPeers `json:"expected,omitempty"`
}

// ExpectedPeers are resources of the cluster upgraded, one per peer.
type ExpectedPeers struct {
	// APIVersion and Kind of the resources (core.liqo.io/v1beta1,
	// ForeignCluster), listed across the cluster.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// IDField is the field holding a peer's ID, dotted (spec.clusterID).
	IDField string `json:"idField"`
	// SecretLabel, on a peer's kubeconfig Secret, holds the ID of the peer
	// it reads (Liqo's liqo.io/remote-cluster-id).
	SecretLabel string `json:"secretLabel"`
	// Missing is what a peer without a kubeconfig Secret does: Block (the
	// default: the upgrade is refused, naming it) or Warn (the upgrade
	// goes on, naming it as not checked).
	Missing string `json:"missing,omitempty"`
}

// What ExpectedPeers.Missing may say.
const (
	MissingBlock = "Block"
	MissingWarn  = "Warn"
)

// KubeconfigSecrets selects the Secrets holding peer kubeconfigs.
type KubeconfigSecrets struct {
	Namespace string `json:"namespace"`
	// Selector is a label selector ("upshift.dev/peer=true"); empty: every
	// Secret of the namespace that has the key.
	Selector string `json:"selector,omitempty"`
	// Key holds the kubeconfig; default "kubeconfig".
	Key string `json:"key,omitempty"`
}

// DefaultKubeconfigKey is the Secret key a peer's kubeconfig is read from
// when KubeconfigSecrets.Key is empty.
const DefaultKubeconfigKey = "kubeconfig"

// PeerNameAnnotation on a peer's Secret names the peer in messages;
// without it, the Secret's name does.
const PeerNameAnnotation = "upshift.dev/peer-name"

// Compatibility locates the compatibility matrix.
type Compatibility struct {
	// ConfigMap holds, under its key, a YAML map from a version to the
	// versions an upgrade may reach from it, the format of the Liqo
	// upgrade controller's liqo-version-compatibility ConfigMap
	// (key compatibility.yaml):
	//   v1.0.0: [v1.0.1, v1.1.0]
	ConfigMap ConfigMapVersion `json:"configMap"`
}

// Release is one version of the platform.
type Release struct {
	// Version is a semantic version ("1.1.0" or "v1.1.0").
	Version string `json:"version"`
	// Plan is the UpgradePlan that brings a cluster to this version: a
	// file of the catalog (a key of its ConfigMap, a URL relative to the
	// catalog's). Empty: the catalog's planTemplate.
	Plan string `json:"plan,omitempty"`
	// Kubernetes is the range of Kubernetes versions the release runs on
	// (">= 1.29, < 1.35"). Empty: any.
	Kubernetes string `json:"kubernetes,omitempty"`
	// Peers is the range of platform versions of peer clusters it works
	// with. Empty: any.
	Peers string `json:"peers,omitempty"`
	// AllowFrom are versions that may upgrade straight to this release,
	// even across minors ("1.1.x || 1.2.x"). Empty: its own minor and the
	// catalog's minor before it.
	AllowFrom string `json:"allowFrom,omitempty"`
	// RequiredStop: no upgrade may jump over this release.
	RequiredStop bool `json:"requiredStop,omitempty"`
	// InstallsKubernetes is the Kubernetes version this release installs
	// ("1.32" or "1.32.4"), for a distribution that bundles Kubernetes (an
	// embedded cluster, k0s). The releases after it are checked against
	// it, a hop moves Kubernetes one minor at most, and a hop that brings
	// a new minor first scans the cluster for objects in API versions it
	// removes. Empty: the release leaves Kubernetes as it is.
	InstallsKubernetes string `json:"installsKubernetes,omitempty"`
}

// VersionSource is one place the running version is read from; exactly
// one of its fields is set.
type VersionSource struct {
	// ConfigMap: the value of a key.
	ConfigMap *ConfigMapVersion `json:"configMap,omitempty"`
	// Image: the tag of a workload container's image.
	Image *ImageVersion `json:"image,omitempty"`
	// Helm: a Helm release's chart or app version.
	Helm *HelmVersion `json:"helm,omitempty"`
	// Label: a label of an object.
	Label *LabelVersion `json:"label,omitempty"`
	// Installation: embedded-cluster's version, in its newest Installation
	// that is Installed.
	Installation *InstallationVersion `json:"installation,omitempty"`
	// Optional: a source that does not exist (no such object, key,
	// container or release) is left out instead of failing detection.
	Optional bool `json:"optional,omitempty"`
}

// ConfigMapVersion reads data[key] of a ConfigMap.
type ConfigMapVersion struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

// ImageVersion reads the tag of a container's image in a Deployment,
// StatefulSet or DaemonSet ("ghcr.io/liqotech/liqo:v1.1.0" gives v1.1.0).
type ImageVersion struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Container is the container's name; empty: the only container.
	Container string `json:"container,omitempty"`
}

// HelmVersion reads a Helm release's chart version or app version (of its
// latest revision).
type HelmVersion struct {
	Namespace string `json:"namespace"`
	Release   string `json:"release"`
	// Field is chartVersion (default) or appVersion.
	Field string `json:"field,omitempty"`
}

// InstallationVersion reads spec.config.version of the newest
// embedded-cluster Installation (by name: its creation time) whose state
// is Installed, as embedded-cluster reads the version it runs; an upgrade
// that failed is not the cluster's version.
type InstallationVersion struct{}

// LabelVersion reads a label of an object.
type LabelVersion struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is empty for a cluster-scoped object.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

// The fields a HelmVersion reads.
const (
	HelmChartVersion = "chartVersion"
	HelmAppVersion   = "appVersion"
)

// ValueSource reads one value of spec.values from the cluster; exactly
// one source is set.
type ValueSource struct {
	// Value names the value, declared in spec.values.
	Value string `json:"value"`
	// Installation reads a field of the newest Installed embedded-cluster
	// Installation. Without one (nothing installed yet), or without the
	// field, the value keeps its default.
	Installation *InstallationField `json:"installation,omitempty"`
}

// InstallationField is a field of an Installation, dotted
// (spec.highAvailability); a bool or a number is written as text.
type InstallationField struct {
	Field string `json:"field"`
}
