package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apiscan"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// TestARemovedAPIScanThatBlocksIsShownAsBlocked: a hop refused by the
// removed-API scan blocks the PlatformUpgrade (tried again: the objects
// may be fixed), with every line of the scan, as a preflight does.
func TestARemovedAPIScanThatBlocksIsShownAsBlocked(t *testing.T) {
	v := semver.MustParse
	err := fmt.Errorf("hop: %w", &upgrade.RemovedAPIsError{Name: "release 1.1.0's plan x-1.1.0", Release: v("1.1.0"), From: v("1.34.4"), To: v("1.35.0"),
		Report: &apiscan.Report{Minor: 35,
			Findings: []apiscan.Finding{{Kind: "HorizontalPodAutoscaler", Namespace: "web", Name: "front"}},
			Problems: []apiscan.Problem{{What: "Helm releases", Err: errors.New("forbidden"), Fix: "grant list on secrets"}}}})
	var reason, msg string
	(&PlatformReconciler{}).failed(err, "system:serviceaccount:web:upgrader",
		func(r, m string) { reason, msg = r, m },
		func(v1alpha1.PlatformPhase, string, string) { t.Fatal("a blocked hop ended the upgrade") })
	if reason != v1alpha1.ReasonPreflightFailed {
		t.Errorf("reason %q, want %q", reason, v1alpha1.ReasonPreflightFailed)
	}
	for _, want := range []string{"the release installs Kubernetes 1.35.0 (the cluster runs 1.34.4)", "HorizontalPodAutoscaler web/front", "cannot check Helm releases", "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
