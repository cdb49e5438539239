package testenv

import (
	"errors"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Process is a process a test started (an `upshift controller`, say):
// its output kept, killed when the test ends, and its output logged when
// the test failed.
type Process struct {
	Cmd  *exec.Cmd
	Out  *SyncBuffer
	done chan struct{}
	err  error
}

// Start starts cmd, its stdout and stderr into Out; name says whose
// output a failed test logs.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Out: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.Out.String())
		}
	})
	return p
}

// Done is closed once the process exited; Err is then how.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (after Done).
func (p *Process) Err() error { return p.err }

// Kill SIGKILLs the process (if still running) and waits for it.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// KilledItself tells whether the process died of SIGKILL within timeout
// (a failpoint that kills it).
func (p *Process) KilledItself(timeout time.Duration) bool {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return false
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() && st.Signal() == syscall.SIGKILL {
			return true
		}
	}
	return false
}

// FreeAddr is a free 127.0.0.1 address for a server the test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
