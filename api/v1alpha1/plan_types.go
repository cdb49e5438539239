package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

	CRDs      *CRDsStep      `json:"crds,omitempty"`
	Manifests *ManifestsStep `json:"manifests,omitempty"`
	Image     *ImageStep     `json:"image,omitempty"`
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

	Ready *ReadyGate `json:"ready,omitempty"`
	HTTP  *HTTPGate  `json:"http,omitempty"`
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
