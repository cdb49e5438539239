package demo_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/Masterminds/semver/v3"
	"github.com/upshift-dev/upshift/internal/catalog"
	upversions "github.com/upshift-dev/upshift/internal/versions"
)

// TestCatalogGoesThroughEveryRelease: the catalog opens, reads the version
// where 1.0.0 installs it, and goes from 1.0.0 to 2.0.0 through 1.1.0 with
// each release's own plan.
func TestCatalogGoesThroughEveryRelease(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Ref{Path: "."}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path, err := cat.Path(semverRequest("1.0.0", "2.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(path) != 2 || path[0].Version.String() != "1.1.0" || path[1].Version.String() != "2.0.0" {
		t.Fatalf("path = %v, want 1.1.0 then 2.0.0", path)
	}
	for _, v := range versions {
		l, err := cat.PlanFor(ctx, semver.MustParse(v), nil)
		if err != nil {
			t.Fatalf("release %s: %v", v, err)
		}
		if l.Plan.Name != "demo-"+v {
			t.Errorf("release %s runs plan %s", v, l.Plan.Name)
		}
	}
	im := cat.Spec.Detect[0].Image
	found := false
	for _, o := range load(t, "1.0.0").objects {
		if o.GetKind() == im.Kind && o.GetNamespace() == im.Namespace && o.GetName() == im.Name {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				c := c.(map[string]any)
				if c["name"] == im.Container {
					tag, _ := catalog.ImageTag(c["image"].(string))
					found = tag == "1.0.0"
				}
			}
		}
	}
	if !found {
		t.Errorf("1.0.0 installs no %s %s/%s container %s tagged 1.0.0: spec.detect reads nothing", im.Kind, im.Namespace, im.Name, im.Container)
	}
}

func semverRequest(from, to string) upversions.Request {
	return upversions.Request{Current: semver.MustParse(from), Target: semver.MustParse(to)}
}
