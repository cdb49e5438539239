package install

import (
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KubeVersion is the Kubernetes version charts are rendered for: the
// version of the Kubernetes libraries and of the local test cluster.
var KubeVersion = &chartutil.KubeVersion{Version: "v1.34.0", Major: "1", Minor: "34"}

// RenderChart renders the chart in dir as `helm template` does (an install
// dry run, client only: no cluster) for release name in namespace with
// values, and returns its objects in the order Helm installs them. The
// chart's CRDs (crds/) are not rendered: Helm applies them as they are.
func RenderChart(dir, name, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	inst := action.NewInstall(cfg)
	inst.DryRun = true
	inst.ClientOnly = true
	inst.Replace = true
	inst.ReleaseName = name
	inst.Namespace = namespace
	inst.KubeVersion = KubeVersion
	rel, err := inst.Run(chrt, values)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", dir, err)
	}
	objs, err := SplitYAML([]byte(rel.Manifest))
	if err != nil {
		return nil, fmt.Errorf("chart %s rendered invalid YAML: %w", dir, err)
	}
	return objs, nil
}
