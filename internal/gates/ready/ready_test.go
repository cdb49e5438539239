package ready_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/gates/ready"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func deployment(ns, name, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {tier: front}}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers: [{name: app, image: %[3]q}]
`, ns, name, image)
}

// create applies objects without waiting: the gate is what waits.
func create(t *testing.T, e *clienttest.Env, y string) {
	t.Helper()
	for _, o := range clienttest.Objects(t, y) {
		if _, err := e.Applier.Apply(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadyGate(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	create(t, e, deployment(e.NS, "web", "registry.example/web:v1")+"---\n"+deployment(e.NS, "api", "registry.example/api:v1"))
	broken := e.Namespace(t)
	create(t, e, deployment(broken, "web", "registry.example/web:v2-broken"))

	tests := []struct {
		name    string
		spec    v1alpha1.ReadyGate
		want    step.Status
		message string // exact, or a prefix when it ends with "…"
		substr  []string
	}{
		{
			name:    "by name",
			spec:    v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "web"},
			want:    step.Succeeded,
			message: fmt.Sprintf("deployment %s/web is Current", e.NS),
		},
		{
			name:    "by selector",
			spec:    v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Selector: "tier=front"},
			want:    step.Succeeded,
			message: fmt.Sprintf(`deployments matching "tier=front" in %s: all 2 Current`, e.NS),
		},
		{
			name:    "selector matching nothing fails",
			spec:    v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Selector: "tier=typo"},
			want:    step.Failed,
			message: fmt.Sprintf(`deployments matching "tier=typo" in %s: nothing matches`, e.NS),
		},
		{
			name:   "crash-looping pods fail, naming the pod",
			spec:   v1alpha1.ReadyGate{APIVersion: "apps/v1", Kind: "Deployment", Namespace: broken, Name: "web"},
			want:   step.Failed,
			substr: []string{"pod " + broken + "/web-", "CrashLoopBackOff"},
		},
		{
			name:   "a missing object times out",
			spec:   v1alpha1.ReadyGate{APIVersion: "v1", Kind: "ConfigMap", Namespace: e.NS, Name: "never"},
			want:   step.Failed,
			substr: []string{"timed out after 2s", "configmap " + e.NS + "/never: not found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			timeout := time.Minute
			if tt.name == "a missing object times out" {
				timeout = 2 * time.Second
			}
			g, err := ready.New(tt.spec, timeout, e.Waiter)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := g.Check(context.Background())
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("%s in %s", res.Message, time.Since(start).Round(time.Millisecond))
			if res.Status != tt.want {
				t.Errorf("Check = %+v, want %s", res, tt.want)
			}
			if tt.message != "" && res.Message != tt.message {
				t.Errorf("message %q, want %q", res.Message, tt.message)
			}
			for _, s := range tt.substr {
				if !strings.Contains(res.Message, s) {
					t.Errorf("message %q does not contain %q", res.Message, s)
				}
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("Check took %s", d)
			}
		})
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, spec := range []v1alpha1.ReadyGate{
		{Kind: "Deployment", Namespace: "demo", Name: "web"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", Selector: "app=web"},
	} {
		if _, err := ready.New(spec, time.Minute, nil); !errors.Is(err, ready.ErrInvalidSpec) {
			t.Errorf("New(%+v) = %v, want ErrInvalidSpec", spec, err)
		}
	}
}
