package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procRecord identifies a process the cluster started. The start time (in
// clock ticks since boot, from /proc/PID/stat) guards against PID reuse: a
// recorded PID whose start time differs belongs to someone else and is never
// signalled.
type procRecord struct {
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// spawnRequest asks the spawner thread to start a process.
type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawnCh = make(chan spawnRequest)

// Processes tied to this process's lifetime use PR_SET_PDEATHSIG, which fires
// when the *thread* that forked them exits, not the process. Go may retire
// threads, so every such child is forked from one goroutine locked to an OS
// thread that lives as long as the process.
func init() {
	go func() {
		runtime.LockOSThread()
		for req := range spawnCh {
			req.done <- req.cmd.Start()
		}
	}()
}

// startProcess starts bin with args, output appended to logPath. A tied
// process gets SIGKILL when this process dies, even by SIGKILL; a detached
// one gets its own session and outlives it.
func startProcess(name, bin string, args []string, logPath string, detached bool) (*exec.Cmd, procRecord, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, procRecord{}, fmt.Errorf("open %s log: %w", name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	cmd := exec.Command(bin, args...)
	cmd.Env = scrubbedEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err = cmd.Start()
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
		spawnCh <- req
		err = <-req.done
	}
	if err != nil {
		return nil, procRecord{}, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	st, err := procStartTime(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, procRecord{}, fmt.Errorf("read start time of %s: %w", name, err)
	}
	return cmd, procRecord{Name: name, PID: cmd.Process.Pid, StartTime: st}, nil
}

// procStartTime reads field 22 of /proc/PID/stat.
func procStartTime(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

// procStat returns the process state letter and its start time.
func procStat(pid int) (state string, startTime uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name in field 2 may hold spaces and parentheses: split
	// after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "", 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	startTime, err = strconv.ParseUint(fields[19], 10, 64)
	return fields[0], startTime, err
}

// alive reports whether the recorded process still runs as the same process.
func (r procRecord) alive() bool {
	state, st, err := procStat(r.PID)
	if err != nil || st != r.StartTime {
		return false
	}
	return state != "Z" && state != "X"
}

// stop sends SIGTERM, waits up to grace, then SIGKILL. It only ever signals
// the recorded process, never a process that reused its PID.
func (r procRecord) stop(grace time.Duration) error {
	if !r.alive() {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pid %d): %w", r.Name, r.PID, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !r.alive() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r.alive() {
		if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill %s (pid %d): %w", r.Name, r.PID, err)
		}
	}
	for i := 0; i < 100 && r.alive(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if r.alive() {
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", r.Name, r.PID)
	}
	return nil
}
