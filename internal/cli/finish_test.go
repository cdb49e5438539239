package cli

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runner"
)

// A stop whose record could not be written is never reported as saved
// and resumable: exit 3, and the message says the save failed.
func TestStopNotSavedNeedsAnOperator(t *testing.T) {
	run := &v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: v1alpha1.RunStatus{Phase: v1alpha1.RunRunning}}
	for _, stop := range []error{runner.ErrInterrupted, runner.ErrAborted} {
		out := &runner.Result{Run: run, Stopped: &runner.NotSavedError{Stop: stop, Err: errors.New("save run demo: etcd is sad")}}
		if code := runExitCode(out, false); code != ExitOperator {
			t.Errorf("%v not saved: exit %d, want %d", stop, code, ExitOperator)
		}
		msg := whatNext(out, ExitOperator, applyAgain)
		if !strings.Contains(msg, "saving that failed") || !strings.Contains(msg, "etcd is sad") || strings.Contains(msg, "interrupted and saved") {
			t.Errorf("%v not saved: message %q", stop, msg)
		}
	}
	saved := &runner.Result{Run: run, Stopped: runner.ErrInterrupted}
	if code := runExitCode(saved, false); code != ExitWaiting {
		t.Errorf("a saved interruption: exit %d, want %d", code, ExitWaiting)
	}
}
