package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/redact"
)

// progress shows a run as it moves: a live tree redrawn in place when
// stdout is a terminal, plain timestamped lines otherwise (logs, CI), and
// lines on stderr when stdout carries -o json|yaml.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	run   *v1alpha1.UpgradeRun // a copy, read by the redraw loop
	lines int                  // lines drawn last time
	fd    int                  // the terminal, for its width
	frame int
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func newProgress(stdout, stderr io.Writer, human bool) *progress {
	p := &progress{w: stdout, done: make(chan struct{})}
	if !human {
		p.w = stderr
	} else if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.live = true
		p.fd = int(f.Fd())
		p.wg.Add(1)
		go p.loop()
	}
	return p
}

// observe shows a transition. The run is shown through redact.Run and the
// outcome's message through redact.Text, like every other printer.
func (p *progress) observe(e engine.Event) {
	cp := redact.Run(copyRun(e.Run))
	e.Run = cp
	e.Outcome.Message = redact.Text(e.Outcome.Message)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.run = cp
	if p.live {
		p.redraw()
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), describeEvent(e))
}

func (p *progress) notice(msg string) {
	msg = redact.Text(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.clear()
		fmt.Fprintln(p.w, msg)
		p.lines = 0
		p.redraw()
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), msg)
}

// stop ends the live view, leaving its last frame on screen. It may be
// called more than once.
func (p *progress) stop() {
	if !p.live {
		return
	}
	p.once.Do(p.halt)
}

func (p *progress) halt() {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.lines = 0
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.mu.Lock()
			p.frame++
			p.redraw()
			p.mu.Unlock()
		}
	}
}

func (p *progress) clear() {
	if p.lines > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.lines)
	}
}

func (p *progress) redraw() {
	if p.run == nil {
		return
	}
	p.clear()
	width := 100
	if w, _, err := term.GetSize(p.fd); err == nil && w > 20 {
		width = w
	}
	// Cut lines to the terminal's width: a wrapped line would throw off
	// the count of lines to move up on the next redraw.
	text := fitWidth(renderTree(p.run, p.frame, time.Now()), width-1)
	fmt.Fprint(p.w, text)
	p.lines = strings.Count(text, "\n")
}

// fitWidth cuts every line of text to at most width runes.
func fitWidth(text string, width int) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if r := []rune(body); len(r) > width {
			lines[i] = string(r[:width-1]) + "…" + l[len(body):]
		}
	}
	return strings.Join(lines, "")
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func mark(ph v1alpha1.Phase, frame int) string {
	switch ph {
	case v1alpha1.PhaseSucceeded:
		return "✔"
	case v1alpha1.PhaseFailed, v1alpha1.PhaseRollbackErr:
		return "✘"
	case v1alpha1.PhaseRolledBack:
		return "↺"
	case v1alpha1.PhaseWarned:
		return "!"
	case v1alpha1.PhasePending, v1alpha1.PhaseSkipped:
		return "·"
	}
	return spinner[frame%len(spinner)]
}

// renderTree draws stages, steps and gates with marks, elapsed times and
// messages.
func renderTree(r *v1alpha1.UpgradeRun, frame int, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s → %s  %s\n", r.Name, r.Spec.Plan.Version, r.Status.Phase)
	for si, ss := range r.Status.Stages {
		fmt.Fprintf(&b, "%s %-28s %-12s %s\n", mark(ss.Phase, frame), ss.Name, ss.Phase, elapsed(ss.StartedAt, ss.FinishedAt, now))
		if ss.Phase == v1alpha1.PhasePending {
			continue
		}
		for i, s := range ss.Steps {
			fmt.Fprintf(&b, "  %s %-26s %-12s %-7s %s\n", mark(s.Phase, frame), s.Name, s.Phase, elapsed(s.StartedAt, s.FinishedAt, now), oneLine(stepMessage(r, si, i)))
		}
		for _, g := range ss.Gates {
			fmt.Fprintf(&b, "  %s %-26s %-12s %-7s %s\n", mark(g.Phase, frame), oneLine(g.Name), g.Phase, elapsed(g.StartedAt, g.FinishedAt, now), oneLine(g.Message))
		}
	}
	return b.String()
}

// elapsed is how long something took, or has been running.
func elapsed(start, end *metav1.MicroTime, now time.Time) string {
	if start == nil {
		return ""
	}
	stop := now
	if end != nil {
		stop = end.Time
	}
	return stop.Sub(start.Time).Round(100 * time.Millisecond).String()
}

// describeEvent is the plain-line form of a transition.
func describeEvent(e engine.Event) string {
	r := e.Run
	a := e.Action
	stage := r.Status.Stages[a.Stage]
	var what string
	switch a.Kind {
	case engine.Backup:
		what = "stage " + stage.Name + ": backup"
	case engine.RunStep:
		what = fmt.Sprintf("stage %s: step %s", stage.Name, stage.Steps[a.Index].Name)
	case engine.CheckGate:
		what = fmt.Sprintf("stage %s: gate %s", stage.Name, stage.Gates[a.Index].Name)
	case engine.Restore:
		what = "stage " + stage.Name + ": rollback"
	}
	if e.Progress {
		return what + " running: " + oneLine(e.Outcome.Message)
	}
	if e.Begin {
		if a.Kind == engine.RunStep && waitsForApproval(r, a.Stage, a.Index) {
			return what + " started: " + stepMessage(r, a.Stage, a.Index)
		}
		return what + " started"
	}
	verdict := "succeeded"
	if !e.Outcome.OK {
		verdict = "FAILED"
	}
	line := what + " " + verdict
	if e.Outcome.Message != "" {
		line += ": " + oneLine(e.Outcome.Message)
	}
	if r.Status.Phase != v1alpha1.RunRunning && r.Status.Phase != v1alpha1.RunRollingBack {
		line += fmt.Sprintf("\n  run %s: %s", r.Status.Phase, r.Status.Message)
	} else if a.Kind != engine.Restore && r.Status.Phase == v1alpha1.RunRollingBack && !e.Outcome.OK {
		line += "\n  rolling back"
	}
	return line
}

func copyRun(r *v1alpha1.UpgradeRun) *v1alpha1.UpgradeRun {
	b, _ := json.Marshal(r)
	var cp v1alpha1.UpgradeRun
	_ = json.Unmarshal(b, &cp)
	return &cp
}
