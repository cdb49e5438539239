package engine

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A run created and stopped before its status was first saved gets the
// status NewRun gave it; a run that started keeps its own.
func TestFirstAttemptOfARunNeverStarted(t *testing.T) {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "team"}}
	p.Spec.Stages = []v1alpha1.Stage{{Name: "crds", Steps: []v1alpha1.Step{{Name: "crds"}}}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := NewRun(p, "sha256:plan", nil, now)
	created := want.DeepCopy()
	created.Status = v1alpha1.RunStatus{AbortRequested: true} // as stored: no status but a request
	if !FirstAttempt(created, now) || !reflect.DeepEqual(created.Status, want.Status) {
		t.Fatalf("FirstAttempt of a created run: status %+v, want %+v", created.Status, want.Status)
	}
	started := want.DeepCopy()
	Begin(started, Action{Kind: Backup, Stage: 0}, now)
	before := started.Status.DeepCopy()
	if FirstAttempt(started, now.Add(time.Minute)) || !reflect.DeepEqual(&started.Status, before) {
		t.Errorf("FirstAttempt changed a started run: %+v, was %+v", started.Status, before)
	}
}
