package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// drive is how the fake process drives the saved run.
type drive struct {
	fails map[string]bool // each fails once
	slow  map[string]bool // run until cancelled (a sibling failed)
	waits map[string]bool // stop the run to wait (apply --no-wait)
	logs  map[string]bool // their failures go on with log lines
	// running: steps that say twice they are still running before they
	// are done, counted here; asked again after again (1 ms if zero).
	running map[string]int
	again   time.Duration
	// killAt: the process dies right after the first save that holds
	// transition killAt. crashAt: it dies at that save instead, which is
	// lost; what started before it (a backup, a gate, a step of a stage
	// whose backup is recorded) finishes its IO, as it may in a real
	// crash. loseAt: the lease is lost during the action begun there.
	killAt, crashAt, loseAt int
	out                     *strings.Builder // nil: print nothing
}

func (s *scenario) newDrive() *drive {
	dr := newDrive()
	for _, k := range s.running {
		dr.running[k] = 0
	}
	return dr
}

func newDrive() *drive {
	return &drive{fails: map[string]bool{}, slow: map[string]bool{}, waits: map[string]bool{}, logs: map[string]bool{}, running: map[string]int{}, killAt: -1, crashAt: -1, loseAt: -1}
}

var errCrashed = errors.New("crashed before saving")

// run drives the saved run with a fake actor, as a resumed process does:
// it first reconciles the record with the backups found in the world.
// Arguments:
//
//	fail=ACTION,…   ACTION is backup:STAGE, step:STEP, gate:STAGE/INDEX or
//	                restore:STAGE; each fails once
//	logs=ACTION,…   the failure's message goes on with a container's last
//	                log lines, as a crashing pod's does
//	kill=N          the process dies right after saving transition N
//	crash=N         the process dies at the save of transition N, which is
//	                lost; the actions started before it finish
//	lose-lease=N    the lease is lost during the action begun at transition N
//	wait=ACTION,…   the action stops the run to wait (an approval with
//	                apply --no-wait): the drive ends, the step Running
//	running=STEP,…  the step says twice it is still running (1 of 3, 2 of
//	                3), asked again after 1 ms each time, then is done
//	again=DURATION  how long running steps ask to wait instead of 1 ms
func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	var out strings.Builder
	dr := newDrive()
	dr.out = &out
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "quiet": // graph stages: the order of lines is not fixed
			dr.out = nil
		case "slow", "fail", "wait", "logs":
			set := map[string]map[string]bool{"slow": dr.slow, "fail": dr.fails, "wait": dr.waits, "logs": dr.logs}[arg.Key]
			for _, v := range arg.Vals {
				set[v] = true
			}
		case "running":
			for _, v := range arg.Vals {
				dr.running[v] = 0
			}
		case "again":
			d, err := time.ParseDuration(arg.Vals[0])
			if err != nil {
				t.Fatal(err)
			}
			dr.again = d
		case "kill":
			dr.killAt = atoi(t, arg.Vals[0])
		case "crash":
			dr.crashAt = atoi(t, arg.Vals[0])
		case "lose-lease":
			dr.loseAt = atoi(t, arg.Vals[0])
		default:
			t.Fatalf("run: unknown argument %s", arg.Key)
		}
	}
	r := s.load(t)
	out.WriteString(s.reconcile(r))
	s.world.drain()
	err := s.drive(r, dr)
	switch {
	case errors.Is(err, errKilled):
		fmt.Fprintf(&out, "killed after saving transitions up to %d\n", s.load(t).Status.Transitions)
	case errors.Is(err, errCrashed):
		saved := s.load(t)
		fmt.Fprintf(&out, "crashed before saving transitions %d..%d; done and not saved: %s\n",
			saved.Status.Transitions+1, r.Status.Transitions, strings.Join(s.world.unsaved(saved), ", "))
	case err != nil:
		fmt.Fprintf(&out, "stopped: %v\n", err)
	default:
		fmt.Fprintf(&out, "=> %s: %s\n", r.Status.Phase, r.Status.Message)
	}
	return out.String()
}

// reconcile records in r the backups found in the world, as a driver
// does before it drives or changes a saved run, and says what it found.
func (s *scenario) reconcile(r *v1alpha1.UpgradeRun) string {
	found := s.world.found(r)
	if len(found) == 0 {
		return ""
	}
	var out strings.Builder
	for _, f := range Reconcile(r, found, s.now()) {
		fmt.Fprintf(&out, "%d found the backup of stage %s\n", r.Status.Transitions, r.Status.Stages[f.Stage].Name)
	}
	return out.String()
}

// drive drives r with a fake actor that does its IO in s.world and a
// saver that keeps the run in s.saved.
func (s *scenario) drive(r *v1alpha1.UpgradeRun, dr *drive) error {
	drv := &Driver{Actor: s.actor(dr), Saver: s.saver(dr), Now: s.now, Observe: func(e Event) {
		if dr.out == nil {
			return
		}
		if e.Begin {
			fmt.Fprintf(dr.out, "%d begin %s\n", e.Run.Status.Transitions, actionKey(e.Run, e.Action))
			return
		}
		if e.Progress {
			fmt.Fprintf(dr.out, "%d progress %s: %s\n", e.Run.Status.Transitions, actionKey(e.Run, e.Action), e.Outcome.Message)
			return
		}
		verdict := "ok"
		if !e.Outcome.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(dr.out, "%d %s %s -> run %s\n", e.Run.Status.Transitions, verdict, actionKey(e.Run, e.Action), e.Run.Status.Phase)
	}}
	return drv.Drive(context.Background(), r)
}

func (s *scenario) actor(dr *drive) Actor {
	var mu sync.Mutex // graph stages act side by side
	return actorFunc(func(ctx context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
		if r.Status.Transitions == dr.loseAt {
			return Outcome{}, errors.New("lease lost")
		}
		key := actionKey(r, a)
		mu.Lock()
		fail := dr.fails[key]
		delete(dr.fails, key)
		asked, running := dr.running[key]
		if running && asked < 2 {
			dr.running[key] = asked + 1
		}
		mu.Unlock()
		if running && asked < 2 {
			return Outcome{Again: max(dr.again, time.Millisecond), Message: fmt.Sprintf("%d of 3", asked+1)}, nil
		}
		if dr.waits[key] {
			return Outcome{}, errors.New("waiting for approval")
		}
		if dr.slow[key] {
			<-ctx.Done() // runs until stopped
			return Outcome{}, context.Cause(ctx)
		}
		o := outcome(r, a, key, fail, dr.logs[key])
		s.world.act(r, a, key, o.Backup, o.OK)
		return o, nil
	})
}

// outcome is what the fake actor reports for an action.
func outcome(r *v1alpha1.UpgradeRun, a Action, key string, fail, logs bool) Outcome {
	if fail {
		o := Outcome{Message: "injected failure of " + key}
		if logs {
			o.Message += "\nlast log lines of pod demo/x-1 container x:\n  panic: injected"
		}
		if a.Kind == Restore {
			o.Rollback = &v1alpha1.Rollback{Differences: []string{"deployment demo/x: spec.replicas was 2 is 3"}}
		}
		return o
	}
	switch a.Kind {
	case Backup:
		objects := 1
		if strings.HasPrefix(r.Spec.Plan.Stages[a.Stage].Name, "hold") {
			objects = 0 // a stage of approvals and pauses touches nothing
		}
		return Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b-" + key}, Objects: objects}}
	case Restore:
		return Outcome{OK: true, Rollback: &v1alpha1.Rollback{Restored: 1}}
	}
	return Outcome{OK: true, Message: "done"}
}

func (s *scenario) saver(dr *drive) Saver {
	return saverFunc(func(_ context.Context, r *v1alpha1.UpgradeRun) error {
		// A transition is saved together with the ones that follow it
		// before any IO: kill (or crash) at the first save that holds it.
		if dr.crashAt > 0 && r.Status.Transitions >= dr.crashAt {
			return errCrashed
		}
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		s.saved = b
		if dr.killAt > 0 && r.Status.Transitions >= dr.killAt {
			return errKilled
		}
		return nil
	})
}
