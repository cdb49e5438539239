package engine

import (
	"fmt"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Kind is what an action does.
type Kind string

const (
	// Backup takes and saves the snapshot of what the stage will touch.
	Backup Kind = "backup"
	// RunStep runs one step of the stage.
	RunStep Kind = "step"
	// CheckGate checks one gate of the stage.
	CheckGate Kind = "gate"
	// Restore rolls the stage back from its backup and verifies it.
	Restore Kind = "restore"
	// Done: the run is in a final or stopped state; nothing to do.
	Done Kind = "done"
)

// Action is the next thing the driver must do.
type Action struct {
	Kind  Kind
	Stage int // index into the plan's stages
	Index int // step or gate index, for RunStep and CheckGate
}

func (a Action) String() string {
	switch a.Kind {
	case RunStep, CheckGate:
		return fmt.Sprintf("%s %d/%d", a.Kind, a.Stage, a.Index)
	case Done:
		return string(a.Kind)
	}
	return fmt.Sprintf("%s %d", a.Kind, a.Stage)
}

// Next decides the next action from the run's status alone.
func Next(r *v1alpha1.UpgradeRun) Action {
	st := &r.Status
	switch st.Phase {
	case v1alpha1.RunRunning:
		return nextForward(r)
	case v1alpha1.RunRollingBack:
		if i := nextToRestore(st); i >= 0 {
			return Action{Kind: Restore, Stage: i}
		}
	}
	return Action{Kind: Done}
}

func nextForward(r *v1alpha1.UpgradeRun) Action {
	for i := range r.Status.Stages {
		ss := &r.Status.Stages[i]
		if ss.Phase == v1alpha1.PhaseSucceeded {
			continue
		}
		// Whatever brought the stage here (a first start, a crash during
		// its backup, a retry after its backup failed), it changes
		// nothing before its backup is recorded.
		if ss.Backup == nil {
			return Action{Kind: Backup, Stage: i}
		}
		for j := range ss.Steps {
			if ss.Steps[j].Phase != v1alpha1.PhaseSucceeded {
				return Action{Kind: RunStep, Stage: i, Index: j}
			}
		}
		for j := range ss.Gates {
			if !gateDone(ss.Gates[j].Phase) {
				return Action{Kind: CheckGate, Stage: i, Index: j}
			}
		}
		// Every step and gate succeeded but the stage was not marked: a
		// crash between the two cannot happen (one transition), so this
		// is a stage without gates whose last step was just recorded.
		return Action{Kind: Done}
	}
	return Action{Kind: Done}
}

// nextToRestore is the last stage that changed something and is not undone
// yet, or -1.
func nextToRestore(st *v1alpha1.RunStatus) int {
	for i := len(st.Stages) - 1; i >= 0; i-- {
		if needsRestore(&st.Stages[i]) {
			return i
		}
	}
	return -1
}

func needsRestore(ss *v1alpha1.StageStatus) bool {
	if ss.Backup == nil {
		return false // nothing changed before the backup was recorded
	}
	if emptyBackup(ss.Backup) {
		return false // the stage touches no object (an approval, a pause)
	}
	switch ss.Phase {
	case v1alpha1.PhaseRolledBack, v1alpha1.PhaseSkipped, v1alpha1.PhaseRollbackErr:
		return false
	}
	return true
}

// emptyBackup: the stage names no object it may change or create.
func emptyBackup(b *v1alpha1.BackupRef) bool { return b.Objects == 0 && b.Absent == 0 }
