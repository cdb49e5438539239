package cozystack_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/source"
	upversions "github.com/upshift-dev/upshift/internal/versions"
)

func open(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Open(context.Background(), catalog.Ref{Path: "."}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func decode(t *testing.T, src v1alpha1.Source) []*unstructured.Unstructured {
	t.Helper()
	b, err := source.Read(context.Background(), src, source.Env{BaseDir: "."})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := source.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestPathIsOneMinorAtATime: from v0.35.5 the path to v0.37.2 is v0.36.2
// then v0.37.2 (the earlier patches skipped), as the README says.
func TestPathIsOneMinorAtATime(t *testing.T) {
	path, err := open(t).Path(upversions.Request{Current: semver.MustParse("v0.35.5"), Target: semver.MustParse("v0.37.2")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range path {
		got = append(got, r.Version.String())
	}
	if strings.Join(got, " ") != "0.36.2 0.37.2" {
		t.Errorf("path %v, want 0.36.2 0.37.2", got)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "v0.35.5 → v0.36.2 → v0.37.2") {
		t.Errorf("README.md does not give the path v0.35.5 → v0.36.2 → v0.37.2")
	}
}

// TestEveryReleasePlanValidates: each release's plan renders and
// validates with no file source (so it runs from a ConfigMap catalog
// too), and has blocking, warning and info checks.
func TestEveryReleasePlanValidates(t *testing.T) {
	cat := open(t)
	rs, err := cat.Releases()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		l, err := cat.PlanFor(context.Background(), r.Version, semver.MustParse("v0.35.2"))
		if err != nil {
			t.Fatalf("release %s: %v", r.Version, err)
		}
		sev := map[v1alpha1.Severity]int{}
		for _, c := range l.Plan.Spec.Checks {
			s := c.Severity
			if s == "" {
				s = v1alpha1.SeverityBlocking
			}
			sev[s]++
		}
		if sev[v1alpha1.SeverityBlocking] < 5 || sev[v1alpha1.SeverityWarning] == 0 || sev[v1alpha1.SeverityInfo] == 0 {
			t.Errorf("release %s: checks by severity %v", r.Version, sev)
		}
	}
}

// TestPlanTargetsTheInstall: detection reads v0.35.5 from the install,
// and the v0.35.5 plan's HelmReleases are the installed ones, so a hop
// changes only their version.
func TestPlanTargetsTheInstall(t *testing.T) {
	cat := open(t)
	installed := decode(t, v1alpha1.Source{Path: "install/v0.35.5"})
	im := cat.Spec.Detect[0].Image
	var tag string
	for _, o := range installed {
		if o.GetKind() == im.Kind && o.GetNamespace() == im.Namespace && o.GetName() == im.Name {
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range cs {
				if c.(map[string]any)["name"] == im.Container {
					tag, _ = catalog.ImageTag(c.(map[string]any)["image"].(string))
				}
			}
		}
	}
	if tag != "v0.35.5" {
		t.Errorf("detection reads %q from the install, want v0.35.5", tag)
	}
	l, err := cat.PlanFor(context.Background(), semver.MustParse("v0.35.5"), semver.MustParse("v0.35.2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range l.Plan.Spec.Stages {
		for _, s := range st.Steps {
			if s.Manifests == nil {
				continue
			}
			for _, o := range decode(t, s.Manifests.Source) {
				found := false
				for _, i := range installed {
					if i.GetKind() == o.GetKind() && i.GetNamespace() == o.GetNamespace() && i.GetName() == o.GetName() {
						found = true
						if o.GetKind() == "HelmRelease" && !equalJSON(i.Object, o.Object) {
							t.Errorf("HelmRelease %s of the v0.35.5 plan differs from the installed one", o.GetName())
						}
					}
				}
				if !found {
					t.Errorf("step %s applies %s %s/%s, which the install lacks", s.Name, o.GetKind(), o.GetNamespace(), o.GetName())
				}
			}
		}
	}
}

func equalJSON(a, b map[string]any) bool {
	ua, ub := &unstructured.Unstructured{Object: a}, &unstructured.Unstructured{Object: b}
	ja, err1 := ua.MarshalJSON()
	jb, err2 := ub.MarshalJSON()
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
