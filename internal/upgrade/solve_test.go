package upgrade

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/versions"
)

func TestSolutionNamesItsHops(t *testing.T) {
	cat := &catalog.Catalog{Where: "examples/x", ReleaseCatalog: &catalog.ReleaseCatalog{Spec: catalog.Spec{Releases: []catalog.Release{
		{Version: "1.0.0"}, {Version: "1.0.1"}, {Version: "1.1.0"}, {Version: "1.2.0"},
	}}}}
	v := semver.MustParse
	s := &Solution{Catalog: cat, From: v("1.0.0"), To: v("1.2.0"), Kubernetes: v("1.34.4"),
		Findings: []catalog.Finding{{Source: "configMap x/v key version", Value: "1.0.0"}},
		Peers:    []versions.Peer{{Name: "east", Version: v("1.0.0")}},
		Path:     []versions.Release{{Version: v("1.1.0")}, {Version: v("1.2.0")}}}
	if s.HopName(0) != "1.0.0 → 1.1.0" || s.HopName(1) != "1.1.0 → 1.2.0" || VersionString(s.HopFrom(1)) != "1.1.0" {
		t.Errorf("hops: %q, %q", s.HopName(0), s.HopName(1))
	}
	got := strings.Join(s.Describe(), "\n")
	for _, want := range []string{
		"catalog examples/x: from 1.0.0 to 1.2.0 in 2 hops: 1.1.0 → 1.2.0",
		"the cluster runs 1.0.0 (configMap x/v key version: 1.0.0)",
		"Kubernetes 1.34.4", "peers: east 1.0.0", "not stopped at: 1.0.1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe lacks %q:\n%s", want, got)
		}
	}
	install := &Solution{Catalog: cat, To: v("1.0.0"), Path: []versions.Release{{Version: v("1.0.0")}}}
	if install.HopName(0) != "install 1.0.0" || !strings.Contains(install.Describe()[0], "install 1.0.0 (nothing installed)") {
		t.Errorf("install: %q, %q", install.HopName(0), install.Describe())
	}
}

// TestKubernetesAtEachHop: a hop starts on the Kubernetes the last
// release before it installed, else the cluster's; it brings a new minor
// only when its release installs one above that.
func TestKubernetesAtEachHop(t *testing.T) {
	v := semver.MustParse
	s := &Solution{Kubernetes: v("1.33.4"), Path: []versions.Release{
		{Version: v("1.1.0"), InstallsKubernetes: v("1.33.6")},
		{Version: v("1.2.0"), InstallsKubernetes: v("1.34.0")},
		{Version: v("1.3.0")},
		{Version: v("1.4.0"), InstallsKubernetes: v("1.35.1")},
	}}
	for i, want := range []struct {
		at     string
		brings bool
	}{{"1.33.4", false}, {"1.33.6", true}, {"1.34.0", false}, {"1.34.0", true}} {
		from, to, ok := s.NewKubernetesMinor(i)
		if got := s.KubernetesAt(i).String(); got != want.at || ok != want.brings {
			t.Errorf("hop %d: KubernetesAt %s, new minor %t; want %s, %t", i, got, ok, want.at, want.brings)
		}
		if ok && (!from.Equal(s.KubernetesAt(i)) || !to.Equal(s.Path[i].InstallsKubernetes)) {
			t.Errorf("hop %d: NewKubernetesMinor = %s → %s", i, from, to)
		}
	}
	if _, _, ok := (&Solution{Path: s.Path[1:]}).NewKubernetesMinor(0); ok {
		t.Error("without a cluster, the first hop cannot be said to bring a new minor")
	}
}
