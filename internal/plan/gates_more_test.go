package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func int32p(n int32) *int32 { return &n }

// The podsRunning, pvcsBound and nodesReady gates: what each requires,
// which numbers are allowed, and selectors that parse.
func TestPodsPVCsNodesGateRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate v1alpha1.Gate
		want []string // exact problems, in order
	}{
		{name: "podsRunning", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "demo", Selector: "app=web"}}},
		{name: "podsRunning with restarts allowed", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "demo", Selector: "app in (web,api),tier!=db", MaxRestarts: int32p(3)}}},
		{name: "podsRunning with zero restarts", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "demo", Selector: "app=web", MaxRestarts: int32p(0)}}},
		{name: "podsRunning without namespace or selector", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{}},
			want: []string{
				"g.podsRunning.namespace: Required value: the pods' namespace",
				"g.podsRunning.selector: Required value: which pods, e.g. app=web",
			}},
		{name: "podsRunning with negative restarts", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "demo", Selector: "app=web", MaxRestarts: int32p(-1)}},
			want: []string{"g.podsRunning.maxRestarts: Invalid value: -1: must not be negative"}},
		{name: "podsRunning with a bad selector", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "demo", Selector: "app==web=x"}},
			want: []string{`g.podsRunning.selector: Invalid value: "app==web=x": `}},
		{name: "podsRunning with a bad namespace", gate: v1alpha1.Gate{PodsRunning: &v1alpha1.PodsRunningGate{Namespace: "Demo", Selector: "app=web"}},
			want: []string{`g.podsRunning.namespace: Invalid value: "Demo": not a namespace name: a lowercase RFC 1123 label`}},

		{name: "pvcsBound, every claim", gate: v1alpha1.Gate{PVCsBound: &v1alpha1.PVCsBoundGate{Namespace: "db"}}},
		{name: "pvcsBound with a selector", gate: v1alpha1.Gate{PVCsBound: &v1alpha1.PVCsBoundGate{Namespace: "db", Selector: "app=postgres"}}},
		{name: "pvcsBound without namespace", gate: v1alpha1.Gate{PVCsBound: &v1alpha1.PVCsBoundGate{Selector: "app=postgres"}},
			want: []string{"g.pvcsBound.namespace: Required value: the claims' namespace"}},
		{name: "pvcsBound with a bad namespace (app= is a valid selector)", gate: v1alpha1.Gate{PVCsBound: &v1alpha1.PVCsBoundGate{Namespace: "db_1", Selector: "app="}},
			want: []string{
				`g.pvcsBound.namespace: Invalid value: "db_1": not a namespace name: a lowercase RFC 1123 label`,
			}},
		{name: "pvcsBound with an unparsable selector", gate: v1alpha1.Gate{PVCsBound: &v1alpha1.PVCsBoundGate{Namespace: "db", Selector: "app in (a"}},
			want: []string{`g.pvcsBound.selector: Invalid value: "app in (a": `}},

		{name: "nodesReady, every node", gate: v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{}}},
		{name: "nodesReady, at least one of a pool", gate: v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{Selector: "pool=gpu", MinReady: int32p(1)}}},
		{name: "nodesReady with minReady 0", gate: v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{MinReady: int32p(0)}},
			want: []string{"g.nodesReady.minReady: Invalid value: 0: must be at least 1, or left out to require every matching node"}},
		{name: "nodesReady with a bad selector", gate: v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{Selector: "!"}},
			want: []string{`g.nodesReady.selector: Invalid value: "!": `}},

		{name: "two of the new kinds", gate: v1alpha1.Gate{NodesReady: &v1alpha1.NodesReadyGate{}, PVCsBound: &v1alpha1.PVCsBoundGate{Namespace: "db"}},
			want: []string{`g: Invalid value: "2 gate kinds": set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateGate(field.NewPath("g"), tc.gate)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n  %v", len(errs), len(tc.want), errs)
			}
			// A want is the start of the problem: parser messages are the
			// library's, the hint is ours.
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("problem %d:\n  %s\nwant it to start with\n  %s", i, e.Error(), tc.want[i])
				}
				if strings.Contains(tc.want[i], ".selector: Invalid") && !strings.HasSuffix(e.Error(), selectorHint) {
					t.Errorf("problem %d does not end with the selector hint: %s", i, e.Error())
				}
			}
		})
	}
}
