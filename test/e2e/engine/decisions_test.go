package engine_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// TestApplyDecisions: an unfinished run refuses a changed plan (naming the
// changed source) and any other plan (naming the run); a completed run
// refuses other content under its name; a rolled-back run reports its
// failure (exit 2) until --retry starts a new attempt.
func TestApplyDecisions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	plan := w.upgradePlan(planOptions{})

	// Leave the run unfinished: killed right after its 5th transition.
	w.upshift([]string{runner.KillAfterTransitionEnv + "=5"}, append([]string{"apply", "-f", plan}, fastLease...)...)
	writes := len(w.upshiftWrites())

	// The same name, a source's content changed.
	settings := strings.TrimSuffix(plan, "plan.yaml") + "settings.yaml"
	orig, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	write(t, settings, strings.Replace(string(orig), `level: "2"`, `level: "3"`, 1))
	r := w.mustExit(1, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	mustContain(t, "changed plan", r.stderr, "plan changed since it started", "spec.stages[0].steps[0].manifests content changed")
	write(t, settings, string(orig))

	// Another plan while this one is unfinished.
	other := w.upgradePlan(planOptions{name: "shop-other"})
	r = w.mustExit(1, nil, append([]string{"apply", "-f", other}, fastLease...)...)
	mustContain(t, "other plan", r.stderr, "run shop-2.0.0 is unfinished")
	if n := w.platformWritesSince(writes); n != 0 {
		t.Errorf("refused applies wrote %d times to the platform", n)
	}

	// Resume and finish; then other content under the finished name.
	w.mustExit(0, nil, append([]string{"apply", "-f", plan}, fastLease...)...)
	changed := w.upgradePlan(planOptions{webTag: "2.0.9"})
	r = w.mustExit(1, nil, append([]string{"apply", "-f", changed}, fastLease...)...)
	mustContain(t, "completed name", r.stderr, "a new plan needs a new metadata.name")

	// A rolled-back run reports its failure until --retry.
	broken := w.upgradePlan(planOptions{name: "shop-3.0.0", webTag: "3.0.0-broken"})
	w.mustExit(2, nil, append([]string{"apply", "-f", broken}, fastLease...)...)
	r = w.mustExit(2, nil, append([]string{"apply", "-f", broken}, fastLease...)...)
	mustContain(t, "rolled-back name", r.stderr, "failed and was rolled back", "--retry")
	w.mustExit(2, nil, append([]string{"apply", "-f", broken, "--retry"}, fastLease...)...)
	if a := w.run("shop-3.0.0").Status.Attempt; a != 2 {
		t.Errorf("--retry: attempt %d, want 2", a)
	}
}

// platformWritesSince counts upshift's writes to the platform namespace
// after the first n writes.
func (w *world) platformWritesSince(n int) int {
	count := 0
	for i, e := range w.upshiftWrites() {
		if i >= n && e.ObjectRef != nil && e.ObjectRef.Namespace == "shop" {
			count++
			w.t.Logf("write %s: %s %s", strconv.Itoa(i), e.Verb, e.Object())
		}
	}
	return count
}
