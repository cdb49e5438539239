package upgrade

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/versions"
)

// A hop resumed, then two of a three-hop path driven: the third is not
// run, and the planned path is the resumed hop's version and the
// solution's. Before solving, the hops driven alone.
func TestResultNotRunAndPlanned(t *testing.T) {
	v := semver.MustParse
	run := &v1alpha1.UpgradeRun{}
	res := &Result{
		Hops: []Hop{{To: "1.1.1", Resumed: true, Run: run}, {From: "1.1.1", To: "1.2.0", Run: run}, {From: "1.2.0", To: "1.3.0", Run: run}},
		Solution: &Solution{From: v("1.1.1"), To: v("1.4.0"),
			Path: []versions.Release{{Version: v("1.2.0")}, {Version: v("1.3.0")}, {Version: v("1.4.0")}}},
	}
	if got := fmt.Sprint(res.NotRun()); got != "[{1.3.0 1.4.0 false <nil>}]" {
		t.Errorf("not run: %s", got)
	}
	if got := strings.Join(res.Planned(), " "); got != "1.1.1 1.2.0 1.3.0 1.4.0" {
		t.Errorf("planned: %s", got)
	}
	res.Hops, res.Solution = res.Hops[:1], nil
	if res.NotRun() != nil || strings.Join(res.Planned(), " ") != "1.1.1" {
		t.Errorf("before solving: not run %v, planned %v", res.NotRun(), res.Planned())
	}
}
