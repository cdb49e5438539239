package conditions

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newRun is a run of a three-stage plan: crds, an approval, data-plane.
func newRun(autoRollback bool) *v1alpha1.UpgradeRun {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo-1.1.0"}}
	p.Spec = v1alpha1.UpgradePlanSpec{Version: "1.1.0", AutoRollback: &autoRollback, Stages: []v1alpha1.Stage{
		{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{}}}},
		{Name: "hold", Steps: []v1alpha1.Step{{Name: "approve", Approval: &v1alpha1.ApprovalStep{Message: "check the control plane"}}}},
		{Name: "data-plane", Steps: []v1alpha1.Step{{Name: "proxy", Image: &v1alpha1.ImageStep{}}}},
	}}
	return engine.NewRun(p, "sha256:a", nil, t0)
}

// drive moves the run as a driver would, every action succeeding except
// those fail names ("step 2/0", "restore 0"), until stop holds right after
// an action began, or nothing is left to do.
func drive(r *v1alpha1.UpgradeRun, fail []string, stop func(engine.Action) bool) *v1alpha1.UpgradeRun {
	for i := 0; i < 100; i++ {
		a := engine.Next(r)
		if a.Kind == engine.Done {
			return r
		}
		engine.Begin(r, a, t0)
		if stop != nil && stop(a) {
			return r
		}
		o := engine.Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}, Rollback: &v1alpha1.Rollback{}}
		for _, f := range fail {
			if a.String() == f {
				o = engine.Outcome{Message: "injected failure", Rollback: &v1alpha1.Rollback{}}
			}
		}
		engine.Complete(r, a, o, t0)
	}
	panic("the run did not settle in 100 actions")
}

func at(kind engine.Kind, stage, index int) func(engine.Action) bool {
	return func(a engine.Action) bool { return a.Kind == kind && a.Stage == stage && a.Index == index }
}

// want is one condition's expected status and reason; "" status: absent.
type want struct {
	status metav1.ConditionStatus
	reason string
	msg    string // a part of the message
}

func TestSetPlanStatus(t *testing.T) {
	approved := drive(newRun(true), nil, at(engine.RunStep, 1, 0))
	if _, err := engine.Approve(approved, "approve", "alice", t0); err != nil {
		t.Fatal(err)
	}
	aborted := drive(newRun(true), nil, at(engine.RunStep, 0, 0))
	if err := engine.Abort(aborted, "bob", t0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		run         *v1alpha1.UpgradeRun
		phase       v1alpha1.RunPhase
		stage, step string
		conds       map[string]want
	}{
		{name: "no run yet", phase: v1alpha1.RunPending, conds: map[string]want{
			v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonPending, "no run yet"},
			v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonPending, "no run yet"},
		}},
		{name: "running a step", run: drive(newRun(true), nil, at(engine.RunStep, 0, 0)),
			phase: v1alpha1.RunRunning, stage: "crds", step: "crds", conds: map[string]want{
				v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonRunning, "run demo-1.1.0 is at stage crds, step crds"},
				v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonRunning, "stage crds, step crds"},
			}},
		{name: "waiting for an approval", run: drive(newRun(true), nil, at(engine.RunStep, 1, 0)),
			phase: v1alpha1.RunRunning, stage: "hold", step: "approve", conds: map[string]want{
				v1alpha1.ConditionReady:              {metav1.ConditionFalse, v1alpha1.ReasonWaitingForApproval, "step approve of stage hold waits for an approval: check the control plane"},
				v1alpha1.ConditionReconciling:        {metav1.ConditionTrue, v1alpha1.ReasonWaitingForApproval, "waits for an approval"},
				v1alpha1.ConditionWaitingForApproval: {metav1.ConditionTrue, v1alpha1.ReasonWaitingForApproval, "step approve of stage hold"},
			}},
		{name: "approved, not moved on yet", run: approved,
			phase: v1alpha1.RunRunning, stage: "hold", step: "approve", conds: map[string]want{
				v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonRunning, "stage hold, step approve"},
				v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonRunning, ""},
			}},
		{name: "rolling back", run: drive(newRun(true), []string{"step 2/0"}, at(engine.Restore, 2, 0)),
			phase: v1alpha1.RunRollingBack, stage: "data-plane", conds: map[string]want{
				v1alpha1.ConditionReady:       {metav1.ConditionFalse, v1alpha1.ReasonRollingBack, "rolling back: stage data-plane: step proxy failed: injected failure"},
				v1alpha1.ConditionReconciling: {metav1.ConditionTrue, v1alpha1.ReasonRollingBack, "rolling back"},
			}},
		{name: "rolled back", run: drive(newRun(true), []string{"step 2/0"}, nil),
			phase: v1alpha1.RunRolledBack, stage: "data-plane", step: "proxy", conds: map[string]want{
				v1alpha1.ConditionReady:      {metav1.ConditionFalse, v1alpha1.ReasonRolledBack, "step proxy failed"},
				v1alpha1.ConditionStalled:    {metav1.ConditionTrue, v1alpha1.ReasonRolledBack, "restore verified"},
				v1alpha1.ConditionRolledBack: {metav1.ConditionTrue, v1alpha1.ReasonRolledBack, "rolled back data-plane, hold, crds; restore verified"},
			}},
		{name: "failed without rollback", run: drive(newRun(false), []string{"step 2/0"}, nil),
			phase: v1alpha1.RunFailed, stage: "data-plane", step: "proxy", conds: map[string]want{
				v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonFailed, "step proxy failed: injected failure"},
				v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonFailed, "step proxy failed: injected failure"},
			}},
		{name: "rollback failed", run: drive(newRun(true), []string{"step 2/0", "restore 0"}, nil),
			phase: v1alpha1.RunRollbackFailed, stage: "crds", conds: map[string]want{
				v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonRollbackFailed, "rolling back stage crds failed"},
				v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonRollbackFailed, "rolling back stage crds failed"},
			}},
		{name: "aborted", run: aborted, phase: v1alpha1.RunAborted, stage: "crds", step: "crds", conds: map[string]want{
			v1alpha1.ConditionReady:   {metav1.ConditionFalse, v1alpha1.ReasonAborted, "aborted by bob"},
			v1alpha1.ConditionStalled: {metav1.ConditionTrue, v1alpha1.ReasonAborted, "aborted by bob"},
		}},
		{name: "succeeded", run: drive(newRun(true), nil, nil), phase: v1alpha1.RunSucceeded, conds: map[string]want{
			v1alpha1.ConditionReady: {metav1.ConditionTrue, v1alpha1.ReasonSucceeded, "reached version 1.1.0"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st v1alpha1.UpgradePlanStatus
			SetPlanStatus(&st, 3, tc.run, metav1.NewTime(t0))
			if st.Phase != tc.phase || st.Stage != tc.stage || st.Step != tc.step || st.ObservedGeneration != 3 {
				t.Errorf("phase %q at %q/%q, observed generation %d; want %q at %q/%q, 3", st.Phase, st.Stage, st.Step, st.ObservedGeneration, tc.phase, tc.stage, tc.step)
			}
			if tc.run != nil && (st.Run != "demo-1.1.0" || st.Version != "1.1.0") {
				t.Errorf("run %q version %q; want demo-1.1.0 and 1.1.0", st.Run, st.Version)
			}
			for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled, v1alpha1.ConditionRolledBack, v1alpha1.ConditionWaitingForApproval} {
				got, w := meta.FindStatusCondition(st.Conditions, typ), tc.conds[typ]
				switch {
				case w.status == "" && got != nil:
					t.Errorf("%s is present (%s, %s: %s); want it absent", typ, got.Status, got.Reason, got.Message)
				case w.status == "":
				case got == nil:
					t.Errorf("%s is absent; want %s, %s", typ, w.status, w.reason)
				case got.Status != w.status || got.Reason != w.reason || !strings.Contains(got.Message, w.msg) || got.ObservedGeneration != 3:
					t.Errorf("%s = %s, %s: %q (generation %d); want %s, %s with %q (generation 3)", typ, got.Status, got.Reason, got.Message, got.ObservedGeneration, w.status, w.reason, w.msg)
				}
			}
		})
	}
}

// A condition keeps its lastTransitionTime while its status holds, and
// takes the new time when its status changes.
func TestTransitionTimes(t *testing.T) {
	r := drive(newRun(true), nil, at(engine.RunStep, 0, 0))
	var st v1alpha1.UpgradePlanStatus
	SetPlanStatus(&st, 1, r, metav1.NewTime(t0))
	drive(r, nil, at(engine.RunStep, 2, 0))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	SetPlanStatus(&st, 1, r, t1)
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); !c.LastTransitionTime.Equal(&metav1.Time{Time: t0}) || !strings.Contains(c.Message, "stage data-plane") {
		t.Errorf("Ready still False: lastTransitionTime %s (want %s), message %q (want the new stage)", c.LastTransitionTime, t0, c.Message)
	}
	drive(r, nil, nil)
	t2 := metav1.NewTime(t0.Add(2 * time.Minute))
	SetPlanStatus(&st, 1, r, t2)
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&t2) {
		t.Errorf("Ready = %s at %s; want True at %s", c.Status, c.LastTransitionTime, t2)
	}
	if meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReconciling) != nil {
		t.Error("Reconciling is still present after the run succeeded")
	}
}
