package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestFromVersionIsTheLastSucceededRunsVersion(t *testing.T) {
	at := func(min int) *metav1.MicroTime {
		m := metav1.NewMicroTime(time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC))
		return &m
	}
	run := func(version string, phase v1alpha1.RunPhase, finished *metav1.MicroTime) v1alpha1.UpgradeRun {
		r := v1alpha1.UpgradeRun{}
		r.Spec.Plan.Version, r.Status.Phase, r.Status.FinishedAt = version, phase, finished
		return r
	}
	cases := []struct {
		name   string
		others []v1alpha1.UpgradeRun
		want   string
	}{
		{"no history", nil, ""},
		{"only failures", []v1alpha1.UpgradeRun{run("2.0.0", v1alpha1.RunRolledBack, at(5))}, ""},
		{"the latest success, not the latest listed", []v1alpha1.UpgradeRun{
			run("1.1.0", v1alpha1.RunSucceeded, at(9)),
			run("1.0.0", v1alpha1.RunSucceeded, at(1)),
		}, "1.1.0"},
		{"a success rolled back since does not count", []v1alpha1.UpgradeRun{
			run("1.0.0", v1alpha1.RunSucceeded, at(1)),
			run("1.1.0", v1alpha1.RunRolledBack, at(9)),
		}, "1.0.0"},
		{"a record without its finish time is skipped", []v1alpha1.UpgradeRun{
			run("1.0.0", v1alpha1.RunSucceeded, at(1)),
			run("9.9.9", v1alpha1.RunSucceeded, nil),
		}, "1.0.0"},
	}
	for _, c := range cases {
		if got := FromVersion(c.others); got != c.want {
			t.Errorf("%s: FromVersion = %q, want %q", c.name, got, c.want)
		}
	}
}
