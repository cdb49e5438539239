package helmx

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// Chart is a loaded Helm chart.
type Chart = chart.Chart

// Load reads a chart from a local directory or a .tgz archive (as made by
// `helm package`). Dependencies declared in Chart.yaml must be present in
// its charts/ directory (`helm dependency build`); a library chart, which
// cannot be installed, is refused.
func Load(chartPath string) (*Chart, error) {
	ch, err := loader.Load(chartPath)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", chartPath, err)
	}
	if err := checkInstallable(ch); err != nil {
		return nil, fmt.Errorf("load chart %s: %w", chartPath, err)
	}
	return ch, nil
}

// checkInstallable refuses library charts and charts whose dependencies
// are missing from charts/.
func checkInstallable(ch *Chart) error {
	if ch.Metadata.Type == "library" {
		return fmt.Errorf("%s is a library chart and cannot be installed", ch.Name())
	}
	if deps := ch.Metadata.Dependencies; len(deps) > 0 {
		return action.CheckDependencies(ch, deps)
	}
	return nil
}

// LocalChart tells a chart named by a path (a directory or a .tgz next to
// the plan) from one fetched from a repository, a URL or a registry.
func LocalChart(chart, repo string) bool {
	return chart != "" && repo == "" && !strings.HasPrefix(chart, "oci://") &&
		!strings.HasPrefix(chart, "https://") && !strings.HasPrefix(chart, "http://")
}
