package helmx_test

import (
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/gates/helmreleases"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/step"
)

// TestListSeesTheLatestRevisionOfEveryRelease: List gives each release's
// latest revision whatever its status, in one namespace or in all of them,
// and the helmReleases gate built on it fails on a failed upgrade.
func TestListSeesTheLatestRevisionOfEveryRelease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ch := loadChart(t)
	ctx := ctxFor(t, 2*time.Minute)
	for _, rel := range []string{"good", "bad"} {
		if _, err := e.helm.InstallOrUpgrade(ctx, rel, e.ns, ch, values(imageV1), helmx.UpgradeOptions{Wait: true}); err != nil {
			t.Fatalf("install %s: %v", rel, err)
		}
	}
	if _, err := e.helm.InstallOrUpgrade(ctx, "bad", e.ns, ch, values(imageBad), helmx.UpgradeOptions{Wait: true, Timeout: 4 * time.Second}); err == nil {
		t.Fatal("broken upgrade succeeded")
	}
	for _, ns := range []string{e.ns, ""} {
		rels, err := e.helm.List(ctx, ns)
		if err != nil {
			t.Fatalf("List(%q): %v", ns, err)
		}
		got := map[string]helmx.ReleaseInfo{}
		for _, r := range rels {
			if r.Namespace == e.ns {
				got[r.Name] = r
			}
		}
		if len(got) != 2 || got["good"].Status != helmx.StatusDeployed || got["bad"].Status != helmx.StatusFailed || got["bad"].Revision != 2 {
			t.Errorf("List(%q) in %s = %+v, want good deployed and bad at revision 2 failed", ns, e.ns, got)
		}
	}
	gate, err := helmreleases.New(v1alpha1.HelmReleasesGate{Namespace: e.ns}, time.Minute, e.helm)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Check(ctx)
	if err != nil || res.Status != step.Failed || !strings.Contains(res.Message, e.ns+"/bad revision 2 is failed") {
		t.Errorf("helmReleases gate = %+v, %v; want it failed naming bad's revision 2", res, err)
	}
}
