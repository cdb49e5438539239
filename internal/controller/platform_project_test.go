package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestProjectPlatform(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t.Run("a resumed hop keeps its start and the hops before a restart", func(t *testing.T) {
		st := &v1alpha1.PlatformUpgradeStatus{Hops: []v1alpha1.HopStatus{
			{From: "1.0.0", To: "1.1.0", Run: "p-1.1.0", Phase: v1alpha1.RunSucceeded},
			{From: "1.1.0", To: "1.2.0", Run: "p-1.2.0", Phase: v1alpha1.RunRunning},
		}, ObservedGeneration: 1, PreviousVersion: "1.0.0", Path: []string{"1.1.0", "1.2.0", "1.3.0"}}
		ProjectPlatform(st, 1, &PlatformProgress{Generation: 1, Previous: "1.2.0", Current: "1.2.0", SolvedFrom: "1.2.0", Path: []string{"1.3.0"}, Phase: v1alpha1.PlatformRunning,
			Hops: []v1alpha1.HopStatus{{To: "1.2.0", Run: "p-1.2.0", Phase: v1alpha1.RunSucceeded}, {From: "1.2.0", To: "1.3.0", Run: "p-1.3.0", Phase: v1alpha1.RunRunning}}}, false, nil, now)
		if len(st.Hops) != 3 || st.Hops[1].From != "1.1.0" || st.Hops[1].Phase != v1alpha1.RunSucceeded || st.Hops[2].Run != "p-1.3.0" {
			t.Errorf("hops = %+v", st.Hops)
		}
		if st.PreviousVersion != "1.0.0" || st.CurrentVersion != "1.2.0" || st.Hop != "3/3" || len(st.Path) != 3 {
			t.Errorf("previous %s current %s path %v hop %s; want 1.0.0, 1.2.0, the whole path, 3/3", st.PreviousVersion, st.CurrentVersion, st.Path, st.Hop)
		}
		if !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReconciling) || meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) {
			t.Errorf("conditions = %+v", st.Conditions)
		}
	})
	t.Run("a new target starts a new record", func(t *testing.T) {
		st := &v1alpha1.PlatformUpgradeStatus{ObservedGeneration: 1, PreviousVersion: "1.0.0", Path: []string{"1.1.0"},
			Hops: []v1alpha1.HopStatus{{From: "1.0.0", To: "1.1.0", Run: "p-1.1.0"}}}
		ProjectPlatform(st, 2, &PlatformProgress{Generation: 2, Previous: "1.1.0", SolvedFrom: "1.1.0", Path: []string{"1.2.0"}, Phase: v1alpha1.PlatformRunning}, false, nil, now)
		if st.PreviousVersion != "1.1.0" || len(st.Hops) != 0 || len(st.Path) != 1 {
			t.Errorf("previous %s path %v hops %v", st.PreviousVersion, st.Path, st.Hops)
		}
	})
	t.Run("rolled back is stalled", func(t *testing.T) {
		st := &v1alpha1.PlatformUpgradeStatus{}
		ProjectPlatform(st, 1, &PlatformProgress{Generation: 1, Phase: v1alpha1.PlatformRolledBack, Message: "hop to 1.2.0 failed"}, false, nil, now)
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled)
		if c == nil || c.Reason != v1alpha1.ReasonRolledBack || c.Message != "hop to 1.2.0 failed" || meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReconciling) != nil {
			t.Errorf("conditions = %+v", st.Conditions)
		}
	})
	t.Run("blocked: queued is progressing, no path is stalled, and a restart recovers it", func(t *testing.T) {
		for reason, stalled := range map[string]bool{v1alpha1.ReasonQueued: false, v1alpha1.ReasonPreflightFailed: true} {
			st := &v1alpha1.PlatformUpgradeStatus{}
			ProjectPlatform(st, 2, nil, false, &Blocked{Generation: 2, Reason: reason, Message: "why", At: now.Time}, now)
			if st.Phase != v1alpha1.PlatformBlocked || meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionStalled) != stalled {
				t.Errorf("%s: phase %s conditions %+v", reason, st.Phase, st.Conditions)
			}
			if b := PlatformBlockedFromStatus(st); b == nil || b.Reason != reason || b.Generation != 2 {
				t.Errorf("%s: recovered %+v", reason, b)
			}
		}
	})
	t.Run("suspended", func(t *testing.T) {
		st := &v1alpha1.PlatformUpgradeStatus{Phase: v1alpha1.PlatformRunning}
		ProjectPlatform(st, 1, nil, true, nil, now)
		if st.Phase != v1alpha1.PlatformSuspended || meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady).Reason != v1alpha1.ReasonSuspended {
			t.Errorf("phase %s conditions %+v", st.Phase, st.Conditions)
		}
	})
}
