package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

// Every http:// URL of a plan is refused before anything is fetched,
// each naming its field and the fix; the plan's spec.allowInsecureHTTP
// or the driver's --allow-http-sources lets them through.
func TestReadRefusesPlainHTTP(t *testing.T) {
	p := &v1alpha1.UpgradePlan{Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{Name: "s", Steps: []v1alpha1.Step{
		{Name: "ok", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{URL: "https://127.0.0.1:1/m.yaml"}}},
		{Name: "plain", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{URL: "http://127.0.0.1:1/m.yaml"}}},
		{Name: "chart", Helm: &v1alpha1.HelmStep{Chart: "web", Repo: "HTTP://127.0.0.1:1/charts"}},
	}}}}}
	_, err := Read(context.Background(), &plan.Loaded{Plan: p}, nil)
	if !errors.Is(err, source.ErrPlainHTTP) {
		t.Fatalf("Read error = %v, want ErrPlainHTTP", err)
	}
	for _, want := range []string{
		"spec.stages[0].steps[1].manifests.url: http:// is refused: use an https:// URL, or set spec.allowInsecureHTTP: true",
		"spec.stages[0].steps[2].helm.repo: http:// is refused",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Read error = %v, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "steps[0]") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Read error = %q: names an https source, or is not one line", err)
	}
	// Allowed: fetched (and failing to connect, here), not refused.
	for name, l := range map[string]*plan.Loaded{
		"spec.allowInsecureHTTP": {Plan: withAllowHTTP(p)},
		"--allow-http-sources":   {Plan: p, AllowHTTP: true},
	} {
		if _, err := Read(context.Background(), l, nil); err == nil || errors.Is(err, source.ErrPlainHTTP) {
			t.Errorf("%s: Read error = %v, want a fetch error", name, err)
		}
	}
}

func withAllowHTTP(p *v1alpha1.UpgradePlan) *v1alpha1.UpgradePlan {
	c := p.DeepCopy()
	c.Spec.AllowInsecureHTTP = true
	return c
}
