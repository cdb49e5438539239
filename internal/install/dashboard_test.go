package install_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/upshift-dev/upshift/internal/install"
)

var dashboardPath = filepath.Join(repoRoot, "config", "grafana", "upshift-dashboard.json")

// The metric families the controller registers (internal/metrics) and
// controller-runtime's reconcile counters: the dashboard queries exactly
// these. The controller's tests check this list against what it registers.
var wantFamilies = []string{
	"controller_runtime_reconcile_errors_total",
	"controller_runtime_reconcile_total",
	"upshift_app_analysis_measurements_total",
	"upshift_app_canary_steps_total",
	"upshift_app_rollouts",
	"upshift_app_transitions_total",
	"upshift_gate_failures_total",
	"upshift_rollbacks_total",
	"upshift_runs",
	"upshift_stage_duration_seconds",
	"upshift_step_duration_seconds",
	"upshift_transitions_total",
}

// TestDashboardMetrics lists the metrics the dashboard queries (go test -v
// shows them) and fails when one is not among wantFamilies, or one of
// wantFamilies has no panel.
func TestDashboardMetrics(t *testing.T) {
	d, err := install.ReadDashboard(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var series, families []string
	for _, e := range d.Exprs() {
		for _, n := range install.MetricNames(e) {
			series = append(series, n)
			families = append(families, install.Family(n))
		}
	}
	slices.Sort(series)
	slices.Sort(families)
	series, families = slices.Compact(series), slices.Compact(families)
	t.Logf("series the dashboard queries: %s", strings.Join(series, " "))
	if d := cmp.Diff(wantFamilies, families); d != "" {
		t.Errorf("metric families of config/grafana/upshift-dashboard.json (-want +got):\n%s", d)
	}
}

// The data source is the ${datasource} variable everywhere: no UID of
// someone's Grafana is written in.
func TestDashboardDatasourceIsAVariable(t *testing.T) {
	d, err := install.ReadDashboard(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(d.Templating.List, func(v struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Query any    `json:"query"`
	}) bool {
		return v.Name == "datasource"
	})
	if i < 0 || d.Templating.List[i].Type != "datasource" || d.Templating.List[i].Query != "prometheus" {
		t.Fatalf("templating %+v: want a variable datasource of type datasource, query prometheus", d.Templating.List)
	}
	const want = `{"type":"prometheus","uid":"${datasource}"}`
	panels := 0
	for _, p := range d.AllPanels() {
		if p.Type == "row" {
			continue
		}
		panels++
		if compact(p.Datasource) != want {
			t.Errorf("panel %q: datasource %s, want %s", p.Title, p.Datasource, want)
		}
		for _, tg := range p.Targets {
			if compact(tg.Datasource) != want {
				t.Errorf("panel %q: a target's datasource %s, want %s", p.Title, tg.Datasource, want)
			}
		}
	}
	if panels < 8 {
		t.Errorf("%d panels, want at least 8", panels)
	}
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(`"uid":`)); n != bytes.Count(b, []byte(`"uid": "${datasource}"`))+1 {
		t.Errorf("the dashboard holds a uid other than ${datasource} and its own")
	}
}

func compact(b []byte) string {
	return strings.Join(strings.Fields(string(b)), "")
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.95, sum by (le, kind) (rate(a_bucket{kind=~"x|y"}[$__rate_interval])))`:         {"a_bucket"},
		`sum(rate(b_total{controller="upgradeplan"}[5m])) / ignoring(x) c + on (a) group_left(b) d offset 5m`: {"b_total", "c", "d"},
		`e > bool 1e3 and f unless g`:              {"e", "f", "g"},
		`$var + h{l="a}\\"b"}`:                     {"h"},
		`sum without (phase) (upshift_runs) * 2.5`: {"upshift_runs"},
	} {
		if got := install.MetricNames(expr); !slices.Equal(got, want) {
			t.Errorf("MetricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}
