package upgrade

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestResumable(t *testing.T) {
	pu := func(uid string) *v1alpha1.RunOwner {
		return &v1alpha1.RunOwner{Kind: v1alpha1.PlatformUpgradeKind, Namespace: "a", Name: "platform", UID: types.UID("u" + uid)}
	}
	run := func(o *v1alpha1.RunOwner, phase v1alpha1.RunPhase) *v1alpha1.UpgradeRun {
		return &v1alpha1.UpgradeRun{Spec: v1alpha1.UpgradeRunSpec{Owner: o}, Status: v1alpha1.RunStatus{Phase: phase}}
	}
	other := pu("1")
	other.Namespace = "b"
	for _, tc := range []struct {
		name  string
		run   *v1alpha1.UpgradeRun
		owner *v1alpha1.RunOwner
		want  bool
	}{
		{"its own, interrupted", run(pu("1"), v1alpha1.RunRunning), pu("1"), true},
		{"its own, failed", run(pu("1"), v1alpha1.RunFailed), pu("1"), true},
		{"its own, aborted (refused unless retried)", run(pu("1"), v1alpha1.RunAborted), pu("1"), true},
		{"its own, finished", run(pu("1"), v1alpha1.RunSucceeded), pu("1"), false},
		{"an earlier upgrade's of the same name", run(pu("0"), v1alpha1.RunRunning), pu("1"), false},
		{"another namespace's", run(other, v1alpha1.RunRunning), pu("1"), false},
		{"the CLI's, for a PlatformUpgrade", run(nil, v1alpha1.RunRunning), pu("1"), false},
		{"a PlatformUpgrade's, for the CLI", run(pu("1"), v1alpha1.RunRunning), nil, false},
		{"the CLI's, for the CLI", run(nil, v1alpha1.RunRunning), nil, true},
	} {
		if got := Resumable(tc.run, tc.owner); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
