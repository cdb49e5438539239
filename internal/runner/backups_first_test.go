package runner

import (
	"context"
	"testing"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/engine"
)

// finishedReadAhead is a read-ahead whose reads are done (nil snap: they
// failed).
func finishedReadAhead(t *testing.T, snap *backup.Snapshot) *readAhead {
	t.Helper()
	_, cancel := context.WithCancel(context.Background())
	ra := &readAhead{cancel: cancel, done: make(chan struct{}), snap: snap}
	close(ra.done)
	return ra
}

// The snapshot read ahead serves the drive's first action only, and only
// when that is the first stage's backup: any other first action (a
// resumed run's step, a later stage's backup) drops it, and it never
// serves twice. A read-ahead that failed serves nothing (the backup reads
// again).
func TestReadAheadServesOnlyTheFirstStagesBackupFirst(t *testing.T) {
	snap := &backup.Snapshot{Entries: []backup.Entry{{}}}
	firstBackup := engine.Action{Kind: engine.Backup, Stage: 0}

	ra := finishedReadAhead(t, snap)
	if got := ra.take(context.Background(), firstBackup); got == nil || len(got.Entries) != len(snap.Entries) {
		t.Fatalf("first action is the first stage's backup: got %+v; want the snapshot read ahead", got)
	}
	if ra.take(context.Background(), firstBackup) != nil {
		t.Error("the read-ahead served a second time")
	}

	for _, first := range []engine.Action{
		{Kind: engine.RunStep, Stage: 0, Index: 0},
		{Kind: engine.Backup, Stage: 1},
		{Kind: engine.Restore, Stage: 0},
	} {
		ra := finishedReadAhead(t, snap)
		if ra.take(context.Background(), first) != nil {
			t.Errorf("first action %s was served the first stage's snapshot", first)
		}
		if ra.take(context.Background(), firstBackup) != nil {
			t.Errorf("after first action %s, a later backup of the first stage was served the old snapshot", first)
		}
	}

	if finishedReadAhead(t, nil).take(context.Background(), firstBackup) != nil {
		t.Error("a failed read-ahead served the backup")
	}
	dropped := finishedReadAhead(t, snap)
	dropped.drop()
	if dropped.take(context.Background(), firstBackup) != nil {
		t.Error("a dropped read-ahead (the run was not new) served the backup")
	}
	var none *readAhead
	if none.take(context.Background(), firstBackup) != nil {
		t.Error("no read-ahead served the backup")
	}
}

// Waiting for reads that do not end stops with the action's context
// (Ctrl-C, abort), and the read-ahead is stopped with it.
func TestReadAheadWaitEndsWithTheAction(t *testing.T) {
	readCtx, cancelReads := context.WithCancel(context.Background())
	ra := &readAhead{cancel: cancelReads, done: make(chan struct{})}
	act, stop := context.WithCancel(context.Background())
	stop()
	if ra.take(act, engine.Action{Kind: engine.Backup}) != nil {
		t.Fatal("an unfinished read-ahead served the backup")
	}
	if readCtx.Err() == nil {
		t.Error("the read-ahead's reads were not stopped")
	}
}
