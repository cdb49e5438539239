package apps

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A rollout outside its window waits, showing when the next one opens,
// and starts in it; a canary step whose turn comes after the window
// closed waits for the next one. The clock is the world's, not the
// wall's.
func TestRolloutWaitsForItsWindows(t *testing.T) {
	spec := seedSpec()
	spec.UpgradeStrategy.MigrationJob = nil
	spec.UpgradeStrategy.Canary.Steps = []v1alpha1.AppCanaryStep{{Weight: 10, Pause: 3600}, {Weight: 50, Pause: 3600}, {Weight: 100}}
	spec.Windows = []v1alpha1.UpgradeWindow{{Schedule: "0 2 * * *", Duration: metav1.Duration{Duration: 90 * time.Minute}, TimeZone: "Europe/Paris"}}
	w := newWorld(t, spec, 10, "registry.example.com/shop:v1.0.0") // 08:00 UTC
	d := w.step()
	st := w.app.Status
	opens := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) // 02:00 in Paris
	if d.Action != None || st.NextWindow == nil || !st.NextWindow.Time.Equal(opens) || d.RequeueAfter != opens.Sub(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("outside the window: %+v, next %v", d, st.NextWindow)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReconciling); c == nil || c.Reason != v1alpha1.ReasonWaitingForWindow || !strings.Contains(c.Message, "2026-11-30T01:00:00Z") {
		t.Errorf("conditions %+v: want Reconciling, reason WaitingForWindow, with the time", st.Conditions)
	}
	w.trace = nil
	w.step() // the clock moved to the window: started
	w.step()
	w.step() // the first step holds an hour
	w.wantTrace("Deploying capture", "Deploying set canary 10% 1+9", "Deploying none")
	if w.app.Status.NextWindow != nil {
		t.Errorf("in the window, next window still shown: %v", w.app.Status.NextWindow)
	}
	w.step() // 03:00 in Paris: the window (until 03:30) is still open
	w.step() // the second step holds an hour: the window closes meanwhile
	w.wantTrace("Deploying set canary 50% 5+5", "Deploying none")
	d = w.step()
	if d.Action != None || w.app.Status.NextWindow == nil || !w.app.Status.NextWindow.Time.Equal(opens.Add(24*time.Hour)) {
		t.Errorf("the promotion after the window: %+v, next %v", d, w.app.Status.NextWindow)
	}
}
