package v1alpha1

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
