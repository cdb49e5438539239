package lease

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReleaseFreesTheLeaseAtOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if id, valid := holder(t, f); valid || id != (Identity{}) {
		t.Fatalf("Holder before any Acquire = %v, %v", id, valid)
	}
	a, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
	// Held past its duration: renewal keeps it.
	time.Sleep(testDuration + testRenew)
	if id, valid := holder(t, f); !valid || id != alice() || closed(a.Lost()) {
		t.Fatalf("after a duration: Holder = %v (valid %v), lost %v", id, valid, closed(a.Lost()))
	}

	a.Release()
	if _, valid := holder(t, f); valid {
		t.Fatal("Holder still valid after Release")
	}
	if closed(a.Lost()) {
		t.Error("Release closed Lost")
	}
	if a.Context().Err() == nil || errors.Is(context.Cause(a.Context()), ErrLost) {
		t.Errorf("after Release: Context err %v, cause %v", a.Context().Err(), context.Cause(a.Context()))
	}
	a.Release() // twice is harmless

	start := time.Now()
	b, err := Acquire(f.ctx, f.cs, f.config(bob()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if d := time.Since(start); d > testRenew {
		t.Errorf("Acquire after Release took %s, want at once", d)
	}
	if id, valid := holder(t, f); !valid || id != bob() {
		t.Fatalf("Holder = %v (valid %v), want bob", id, valid)
	}
}

// A second process is refused while the first keeps renewing, with an
// error that names the first: user, host, pid and run.
func TestRefusedWhileHolderRenews(t *testing.T) {
	t.Parallel()
	f := setup(t)
	proc := startHolder(t, f.c.KubeconfigPath(), f.ns, "demo-1.1.0")
	start := time.Now()
	_, err := Acquire(f.ctx, f.cs, f.config(bob()))
	waited := time.Since(start)
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire = %v, want ErrHeld", err)
	}
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("Acquire error %T is no *HeldError", err)
	}
	want := CurrentIdentity("demo-1.1.0")
	want.PID = proc.Process.Pid
	if he.Holder != want {
		t.Errorf("HeldError names %#v, want %#v", he.Holder, want)
	}
	if !strings.Contains(err.Error(), want.String()) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if waited < testDuration || waited > testDuration+4*testRenew {
		t.Errorf("refused after %s, want about one duration (%s)", waited, testDuration)
	}
	if id, valid := holder(t, f); !valid || id != want {
		t.Errorf("after the refusal Holder = %v (valid %v), want the first process", id, valid)
	}
}

// A holder that dies without releasing (SIGKILL) stops renewing; the next
// Acquire takes over once the lease expires.
func TestTakeOverFromKilledHolder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	proc := startHolder(t, f.c.KubeconfigPath(), f.ns, "demo-1.1.0")
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()
	if id, valid := holder(t, f); !valid || id.PID != proc.Process.Pid {
		t.Fatalf("right after the kill Holder = %v (valid %v), want the killed process", id, valid)
	}
	start := time.Now()
	h, err := Acquire(f.ctx, f.cs, f.config(bob()))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer h.Release()
	if took < testDuration-testRenew || took > testDuration+4*testRenew {
		t.Errorf("took over after %s, want about one duration (%s)", took, testDuration)
	}
	if id, valid := holder(t, f); !valid || id != bob() {
		t.Fatalf("Holder = %v (valid %v), want bob", id, valid)
	}
}
