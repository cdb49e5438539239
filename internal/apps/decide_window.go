package apps

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/window"
)

// windowsOf parses the rollout's windows; each error names its field.
func windowsOf(app *v1alpha1.AppRollout) ([]*window.Window, field.ErrorList) {
	return window.ParseAll(app.Spec.Windows, field.NewPath("spec", "windows"))
}

// outsideWindow tells whether what (a start, a canary step, a promotion)
// must wait for a window, and then how: the next window's time in status
// and a look again when it opens. A rollout takes a step when one of its
// windows is open; a step's own length is not weighed (a canary's is its
// pause, which a person may end), unlike a plan's stages.
func (x *decider) outsideWindow(what string) (Decision, bool) {
	if len(x.app.Spec.Windows) == 0 {
		x.st.NextWindow = nil
		return Decision{}, false
	}
	ws, errs := windowsOf(x.app)
	if len(errs) > 0 {
		x.st.Message = what + " waits: " + errs.ToAggregate().Error()
		return Decision{}, true
	}
	d := window.Decide(ws, x.o.Now, 0)
	if d.Start {
		x.st.NextWindow = nil
		return Decision{}, false
	}
	if d.Next.IsZero() {
		x.st.NextWindow = nil
		x.st.Message = what + " waits for a window, and none of spec.windows opens: fix their schedules"
		return Decision{}, true
	}
	next := metav1.NewTime(d.Next)
	if was := x.app.Status.NextWindow; was == nil || !was.Equal(&next) {
		x.event(false, v1alpha1.ReasonWaitingForWindow, fmt.Sprintf("%s waits for the window opening at %s", what, d.Next.UTC().Format(time.RFC3339)))
	}
	x.st.NextWindow = &next
	x.st.Message = fmt.Sprintf("%s waits for a window: the next opens at %s (until %s)", what, d.Next.UTC().Format(time.RFC3339), d.Closes.UTC().Format(time.RFC3339))
	return Decision{RequeueAfter: d.Next.Sub(x.o.Now)}, true
}
