package v1alpha1

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
