package embeddedcluster_test

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/Masterminds/semver/v3"

	embeddedcluster "github.com/upshift-dev/upshift/examples/embedded-cluster"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/plan"
)

// open opens the embedded catalog with values set.
func open(t *testing.T, values map[string]string) *catalog.Catalog {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, embeddedcluster.FS); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), catalog.Ref{Path: dir}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.SetValues(values); err != nil {
		t.Fatal(err)
	}
	return cat
}

func planFor(t *testing.T, cat *catalog.Catalog, v string) *plan.Loaded {
	t.Helper()
	l, err := cat.PlanFor(context.Background(), semver.MustParse(v), semver.MustParse(embeddedcluster.Installed))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func stages(l *plan.Loaded) []string {
	var out []string
	for _, st := range l.Plan.Spec.Stages {
		out = append(out, st.Name)
	}
	return out
}

// The embedded files are the catalog's: its releases are the versions
// the demo names, both upgrades move k0s to K0s, and the stages are
// embedded-cluster's components in its order: the five of a cluster
// online, all eight for an airgap HA cluster whose license has disaster
// recovery (Registry, SeaweedFS, Disaster Recovery in their places), with
// the artifacts and k0s from the registry.
func TestEmbeddedCatalog(t *testing.T) {
	cat := open(t, nil)
	var got []string
	for _, r := range cat.Spec.Releases {
		got = append(got, r.Version)
	}
	if !slices.Equal(got, []string{embeddedcluster.Installed, embeddedcluster.Good, embeddedcluster.Broken}) {
		t.Errorf("releases %v", got)
	}
	online := []string{"Runtime", "Storage", "Runtime Operator", "Admin Console", "Additional Components"}
	for _, v := range []string{embeddedcluster.Good, embeddedcluster.Broken} {
		l := planFor(t, cat, v)
		if !slices.Equal(stages(l), online) {
			t.Errorf("%s: stages %v, want %v", v, stages(l), online)
		}
		k := l.Plan.Spec.Stages[0].Steps[3].Autopilot
		if k == nil || k.Version != embeddedcluster.K0s || k.Airgap {
			t.Errorf("%s: the k0s step %+v, want k0supdate to %s", v, k, embeddedcluster.K0s)
		}
	}
	all := planFor(t, open(t, map[string]string{"airgap": "true", "ha": "true", "disasterRecovery": "true"}), embeddedcluster.Good)
	want := []string{"Runtime", "Storage", "Runtime Operator", "Registry", "SeaweedFS", "Disaster Recovery", "Admin Console", "Additional Components"}
	if !slices.Equal(stages(all), want) {
		t.Errorf("airgap, HA, disaster recovery: stages %v, want %v", stages(all), want)
	}
	runtime := all.Plan.Spec.Stages[0].Steps
	if !runtime[1].Distribute.Airgap || runtime[3].Autopilot.Platforms["linux-amd64"].URL != "http://127.0.0.1:50000/bin/k0s-upgrade" {
		t.Errorf("airgap: the artifacts not from the registry, or k0s not from the local artifact mirror: %+v %+v", runtime[1].Distribute, runtime[3].Autopilot)
	}
	if _, err := fs.ReadFile(embeddedcluster.FS, "charts/component/templates/deployment.yaml"); err != nil {
		t.Errorf("the chart is not embedded: %v", err)
	}
}
