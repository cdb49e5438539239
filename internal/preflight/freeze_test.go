package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// The preflight of a freeze: the resources it names must be served (a
// misspelt one would freeze nothing), it must not deny what a later step
// writes (the manifests' ConfigMap, known only once its source is read
// and mapped), and the plan's credentials must be allowed to write and
// delete its policy and binding.
func TestPreflightOfAFreeze(t *testing.T) {
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := open(c.RESTConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	peers, shop := testenv.Namespace(t, ctx, s.cs, "peers"), testenv.Namespace(t, ctx, s.cs, "shop")
	freeze := v1alpha1.Step{Name: "freeze", Freeze: &v1alpha1.FreezeStep{
		Rules: []v1alpha1.FreezeRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}},
			{APIGroups: []string{"liqo.io"}, Resources: []string{"foreignclusterz"}, Operations: []string{"CREATE"}},
		},
		Namespaces: []string{peers, shop},
	}}
	settings := v1alpha1.Step{Name: "settings", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: "x"}}}
	pl := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{
		{Name: "hold", Steps: []v1alpha1.Step{freeze}},
		{Name: "config", Steps: []v1alpha1.Step{settings}},
	}}}
	p, err := resolve.FromSources(pl, map[string][]byte{
		resolve.SourcePath(1, 0, settings): []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + shop + "}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Preflight(ctx, p).ToAggregate().Error()
	for _, want := range []string{
		`spec.stages[0].steps[0].freeze.rules[1].resources[0]: Invalid value: "foreignclusterz": the cluster serves no resource foreignclusterz in API group "liqo.io" and no CRD of the plan defines it, so the rule would deny nothing`,
		"spec.stages[0].steps[0].freeze.rules[0]: Forbidden: denies CREATE of configmaps in namespace " + shop + ", which step settings (stage config) does",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("preflight lacks %q:\n%s", want, strings.ReplaceAll(got, ", ", "\n"))
		}
	}

	// Someone with no rights: the freeze's writes are among what is missing.
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	nobody, err := open(c.RESTConfig(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got = nobody.Preflight(ctx, p).ToAggregate().Error()
	for _, want := range []string{
		"spec.stages[0].steps[0].freeze (its ValidatingAdmissionPolicy and binding): Forbidden: these credentials may not create validatingadmissionpolicies.admissionregistration.k8s.io cluster-wide",
		"spec.stages[0].steps[0].freeze (its ValidatingAdmissionPolicy and binding): Forbidden: these credentials may not delete validatingadmissionpolicybindings.admissionregistration.k8s.io cluster-wide",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("preflight as nobody lacks %q:\n%s", want, strings.ReplaceAll(got, ", ", "\n"))
		}
	}
}
