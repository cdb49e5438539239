package embeddedcluster_test

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	embeddedcluster "github.com/upshift-dev/upshift/examples/embedded-cluster"
	"github.com/upshift-dev/upshift/internal/catalog"
)

// The embedded files are the catalog's: it opens from them, its releases
// are the versions the demo names, and both upgrades move k0s to K0s.
func TestEmbeddedCatalog(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, embeddedcluster.FS); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), catalog.Ref{Path: dir}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range cat.Spec.Releases {
		got = append(got, r.Version)
	}
	if strings.Join(got, " ") != strings.Join([]string{embeddedcluster.Installed, embeddedcluster.Good, embeddedcluster.Broken}, " ") {
		t.Errorf("releases %v", got)
	}
	for _, v := range []string{"2.17.0", "2.17.1"} {
		data, err := fs.ReadFile(embeddedcluster.FS, v+"/plan.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var p v1alpha1.UpgradePlan
		if err := yaml.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, st := range p.Spec.Stages {
			for _, s := range st.Steps {
				if s.Autopilot != nil {
					found = true
					if s.Autopilot.Version != embeddedcluster.K0s {
						t.Errorf("%s moves k0s to %s, K0s says %s", v, s.Autopilot.Version, embeddedcluster.K0s)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s has no autopilot step", v)
		}
	}
	if _, err := fs.ReadFile(embeddedcluster.FS, "charts/component/templates/deployment.yaml"); err != nil {
		t.Errorf("the chart is not embedded: %v", err)
	}
}
