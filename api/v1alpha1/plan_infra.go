package v1alpha1

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// AutopilotStep upgrades k0s on every node through k0s autopilot, as
// embedded-cluster does: it writes autopilot's Plan
// (autopilot.k0sproject.io/v1beta2, cluster-scoped, named autopilot:
// one at a time), waits until autopilot completes it and every node
// reports the version, then deletes it. Nodes labelled
// node-role.kubernetes.io/control-plane are its controllers, the others
// its workers. When every node runs the version already, nothing is
// written. A rollback removes the Plan; a node autopilot already moved
// to the version stays on it (autopilot does not downgrade), and the
// rollback says so.
type AutopilotStep struct {
	// Version is the k0s version, as k0s names it: v1.34.1+k0s.0. A node
	// runs it once its kubelet reports the version up to "+k0s"
	// (v1.34.1+k0s).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`
	// Platforms maps each platform the nodes run (linux-amd64,
	// linux-arm64) to where autopilot downloads the k0s binary from (an
	// airgap step: the image bundle).
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=8
	Platforms map[string]AutopilotArtifact `json:"platforms"`
	// Airgap writes an airgapupdate command (the version's image bundle,
	// to every node) instead of k0supdate.
	// +optional
	Airgap bool `json:"airgap,omitempty"`
	// Installation names the embedded-cluster Installation this upgrade
	// records, written on the Plan as embedded-cluster does
	// (embedded-cluster.replicated.com/installation-name).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Installation string `json:"installation,omitempty"`
}

// AutopilotArtifact is where autopilot downloads one platform's artifact.
type AutopilotArtifact struct {
	// URL is an http(s) URL the nodes can reach.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// SHA256 of the URL's content (64 hex digits); autopilot verifies it.
	// +kubebuilder:validation:Pattern=`^[a-f0-9]{64}$`
	// +optional
	SHA256 string `json:"sha256,omitempty"`
}

// DistributeStep puts a release's artifacts on every node's disk before
// the nodes are upgraded, as embedded-cluster's artifact Jobs do: one Job
// per node (copy-artifacts-<node>, pinned to it by nodeName, the node's
// HostPath mounted read-write), running Image with Command. Each call
// lists the nodes again, so a node that joins during the step gets its
// Job. The step succeeds once every node's Job has, and deletes the Jobs
// and its Secret; a Job that fails fails the step, naming the node and
// its log's last lines. A rollback deletes them too.
type DistributeStep struct {
	// Namespace of the Jobs and their Secret. Default embedded-cluster.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Image copies the artifacts (embedded-cluster's
	// local-artifact-mirror).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`
	// Command of its one container.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Command []string `json:"command"`
	// Artifacts the Jobs fetch, by name: a URL online, an image or chart
	// reference in a registry when airgap. The container reads them as
	// JSON in ARTIFACTS.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Artifacts map[string]string `json:"artifacts,omitempty"`
	// Airgap: the artifacts come from a registry or a bundle; the Jobs'
	// artifacts-config-hash annotation is then their hash (empty online,
	// as embedded-cluster writes it).
	// +optional
	Airgap bool `json:"airgap,omitempty"`
	// Env of the container.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Env []NameValue `json:"env,omitempty"`
	// SecretEnv are variables read from Secrets of the Jobs' namespace
	// (embedded-cluster's license ID). Their values are copied into a
	// Secret of the step's own, created before the Jobs and deleted
	// after them: the Jobs see those keys alone, for as long as they run.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	SecretEnv []SecretEnvVar `json:"secretEnv,omitempty"`
	// HostPath is the node's directory mounted read-write at MountPath.
	// Default /var/lib/embedded-cluster at /embedded-cluster.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	HostPath string `json:"hostPath,omitempty"`
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	MountPath string `json:"mountPath,omitempty"`
	// Installation names the embedded-cluster Installation the artifacts
	// are for: the Jobs' installation-name annotation and INSTALLATION.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Installation string `json:"installation,omitempty"`
	// ServiceAccountName the Jobs' pods run as (embedded-cluster's
	// embedded-cluster-operator). Default: the namespace's default.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// BackoffLimit of each Job. Default 2, as embedded-cluster's.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// NameValue is an environment variable.
type NameValue struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Value string `json:"value,omitempty"`
}

// SecretEnvVar is an environment variable read from a key of a Secret.
type SecretEnvVar struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`
	// Secret of the Jobs' namespace, and its key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Secret string `json:"secret"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// ClusterConfigStep updates k0s's ClusterConfig (kube-system/k0s) as
// embedded-cluster does after a k0s upgrade: the release's images, then
// the vendor's overrides, then the end user's, each merged over the one
// before into spec (JSON merge patch). A new pause image is written
// first, on its own, as embedded-cluster writes it. The ClusterConfig is
// backed up with its stage and restored on rollback like any object.
type ClusterConfigStep struct {
	// Namespace and Name of the ClusterConfig. Default kube-system/k0s.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// Images is k0s's spec.images: {pause: {image, version}, coredns: …}.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Images *apiextensionsv1.JSON `json:"images,omitempty"`
	// Overrides are merged into spec in order, each over the one before:
	// embedded-cluster's vendor overrides, then the end user's. A null
	// removes a field.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Overrides []apiextensionsv1.JSON `json:"overrides,omitempty"`
}

// InstallationStep records the upgrade in embedded-cluster's Installation
// resources (embeddedcluster.replicated.com/v1beta1, cluster-scoped), as
// embedded-cluster does. The first installation step of a run's attempt
// creates a new Installation named by the time (20060102150405) and
// labelled replicated.com/disaster-recovery=ec-install, its spec the
// newest Installation's with Spec merged over it; each installation step
// then sets its status.state and reason. Earlier Installations are left
// as they are. A rollback marks the attempt's Installation Failed.
type InstallationStep struct {
	// State is embedded-cluster's: Installing, KubernetesInstalled,
	// AddonsInstalling, AddonsInstalled or Installed.
	// +kubebuilder:validation:Enum=Installing;KubernetesInstalled;AddonsInstalling;AddonsInstalled;Installed
	State string `json:"state"`
	// Reason is written with the state ("Upgrading Kubernetes",
	// "Upgraded").
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
	// Spec is merged over the newest Installation's spec (JSON merge
	// patch) when the attempt's Installation is created: the release's
	// config, artifacts, licenseInfo. Unused once it exists.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Spec *apiextensionsv1.JSON `json:"spec,omitempty"`
}
