package engine_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// TestLeaseGuardsTheRun: while one `apply` drives a run, a second is
// refused (exit 1) naming the holder; after the first is SIGKILLed, a new
// `apply` takes the run over once the lease expires and finishes it.
func TestLeaseGuardsTheRun(t *testing.T) {
	t.Parallel()
	// Slow pods keep the first run busy long enough.
	w := newWorld(t, localcluster.Options{PodReadyDelay: 3 * time.Second})
	w.installPlatform()
	plan := w.upgradePlan(planOptions{})
	first := w.command(nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the first process has started the run.
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := w.upshift(nil, "status", "shop-2.0.0", "-o", "json")
		if r.code == 0 && bytes.Contains([]byte(r.stdout), []byte(`"phase": "Running"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first apply did not start a run:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	other := w.upgradePlan(planOptions{name: "shop-other"})
	second := w.mustExit(1, nil, append([]string{"apply", "-f", other}, fastLease...)...)
	mustContain(t, "second apply", second.stderr, "held by another process", "pid", "run shop-2.0.0")
	same := w.mustExit(1, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	mustContain(t, "same plan, second process", same.stderr, "held by another process")

	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	took := time.Now()
	w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	t.Logf("took over and finished %s after the kill", time.Since(took).Round(time.Millisecond))
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunSucceeded {
		t.Fatalf("run ended %s", ph)
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.0")
}
