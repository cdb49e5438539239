package demo_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	demo "github.com/upshift-dev/upshift/examples/demo"
	"github.com/upshift-dev/upshift/internal/plan"
)

// Each plan is valid, named for its version, and reaches it.
func TestPlansAreValid(t *testing.T) {
	for _, v := range versions {
		r := load(t, v)
		if r.plan.Name != "demo-"+v || r.plan.Spec.Version != v {
			t.Errorf("%s: name %q, version %q; want demo-%s, %s", v, r.plan.Name, r.plan.Spec.Version, v, v)
		}
	}
}

// 2.0.0 fails at its proxy step and nowhere else; 1.1.0 has nothing broken.
func TestOnlyTheProxyOf200IsBroken(t *testing.T) {
	for _, v := range versions[1:] {
		for step, img := range load(t, v).images() {
			broken := strings.Contains(img[strings.LastIndex(img, ":")+1:], "broken")
			want := v == "2.0.0" && step == "proxy/proxy"
			if broken != want {
				t.Errorf("%s: %s runs %s: broken %t, want %t", v, step, img, broken, want)
			}
			if tag := img[strings.LastIndex(img, ":")+1:]; !strings.HasPrefix(tag, v) {
				t.Errorf("%s: %s runs %s, want a %s tag", v, step, img, v)
			}
		}
	}
}

// The app plan `upshift demo --ui` serves is valid as it is embedded.
func TestAppPlanIsValid(t *testing.T) {
	l, err := plan.Load(filepath.Join("app", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		t.Fatalf("app/plan.yaml: %v", errs.ToAggregate())
	}
	if _, err := fs.Stat(demo.FS, "app/plan.yaml"); err != nil {
		t.Errorf("the app plan is not embedded: %v", err)
	}
}
