package engine_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// background is an upshift process the test lets run while it acts.
type background struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
	code int
}

// startUpshift starts the binary without waiting for it; stdout and
// stderr go to one buffer.
func (w *world) startUpshift(args ...string) *background {
	w.t.Helper()
	b := &background{cmd: w.command(nil, args...), out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		err := b.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			b.code = ee.ExitCode()
		case err != nil:
			b.code = -1
		}
	}()
	w.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

func (b *background) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// wait fails the test unless the process exits within d; it returns the
// exit code (-1 when killed by a signal).
func (b *background) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(d):
		t.Fatalf("upshift %s did not exit within %s:\n%s", strings.Join(b.cmd.Args[1:], " "), d, b.out)
		return 0
	}
}

// waitStageRunning polls `upshift status` until the run is Running and the
// named stage is running its steps.
func (w *world) waitStageRunning(name, stage string, bg *background) *v1alpha1.UpgradeRun {
	w.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := "no status yet"
	for {
		r := w.upshift(nil, "status", name, "-o", "json")
		if r.code == 0 {
			var run v1alpha1.UpgradeRun
			if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
				w.t.Fatalf("decode status: %v\n%s", err, r.stdout)
			}
			last = string(run.Status.Phase)
			for _, st := range run.Status.Stages {
				if st.Name == stage {
					last += ", stage " + stage + " " + string(st.Phase)
					if run.Status.Phase == v1alpha1.RunRunning && st.Phase == v1alpha1.PhaseRunning {
						return &run
					}
				}
			}
		}
		if bg.exited() {
			w.t.Fatalf("upshift %s exited (code %d) before stage %s ran:\n%s", strings.Join(bg.cmd.Args[1:], " "), bg.code, stage, bg.out)
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("run %s never had stage %s running (last: %s):\n%s", name, stage, last, bg.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
