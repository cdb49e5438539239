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
