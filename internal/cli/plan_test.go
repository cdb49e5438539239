package cli

import (
	"strings"
	"testing"
)

func TestPlanPrintsStagesOfAValidPlan(t *testing.T) {
	out, _, err := run(t, "plan", "-f", "../plan/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan demo-1.1.0: target version 1.1.0, 2 stage(s)", "checked the file only", "1. stage crds", "step controller-manager: set images of Deployment demo-system/demo-controller-manager: manager=example.com/demo/controller:1.1.0", "gate http http://127.0.0.1:9000/healthz"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanListsEveryProblemAndExitsOne(t *testing.T) {
	_, _, err := run(t, "plan", "-f", "../plan/testdata/invalid.yaml")
	if err == nil {
		t.Fatal("an invalid plan passed")
	}
	if !strings.Contains(err.Error(), "10 problem(s), nothing was changed") || !strings.Contains(err.Error(), "\n  spec.stages[1].steps[0].image.kind") {
		t.Errorf("error:\n%v", err)
	}
	if code := exitCode(err); code != ExitInvalid {
		t.Errorf("exit code %d, want %d", code, ExitInvalid)
	}
}
