package plan

import (
	"strings"
	"testing"
)

func TestValidPlanHasNoErrors(t *testing.T) {
	l, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := Validate(l); len(errs) > 0 {
		t.Fatalf("valid plan rejected: %v", errs.ToAggregate())
	}
	if got := l.Plan.Spec.Stages[1].Steps[0].Timeout.Duration.String(); got != "2m0s" {
		t.Errorf("timeout = %s, want 2m0s", got)
	}
}

// Every problem is reported at once, each with its field path.
func TestInvalidPlanReportsEveryProblemWithItsPath(t *testing.T) {
	l, err := Load("testdata/invalid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	errs := Validate(l)
	got := errs.ToAggregate().Error()
	for _, want := range []string{
		"spec.version: Required value",
		"spec.stages[1].name: Duplicate value: \"a\"",
		"spec.stages[1].steps[0].name: Duplicate value: \"s1 (also spec.stages[0].steps[0])\"",
		"spec.stages[0].steps[0]: Forbidden: set exactly one step kind",
		"spec.stages[0].steps[0].crds.path: Invalid value: \"missing/\": cannot read it",
		"spec.stages[1].steps[0].image.kind: Unsupported value: \"Pod\"",
		"spec.stages[1].steps[0].image.images: Required value: at least one container is required",
		"spec.stages[1].steps[0].timeout: Invalid value: \"-5s\"",
		"spec.stages[1].gates[0].ready: Forbidden: set exactly one of name or selector",
		"spec.stages[1].gates[1]: Invalid value: \"0 gate kinds\"",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, strings.ReplaceAll(got, ", ", "\n"))
		}
	}
	if len(errs) != 10 {
		t.Errorf("%d errors, want 10:\n%s", len(errs), strings.ReplaceAll(got, ", ", "\n"))
	}
}

func TestUnknownFieldIsAnError(t *testing.T) {
	_, err := Load("testdata/unknown-field.yaml")
	if err == nil || !strings.Contains(err.Error(), `unknown field "stepz"`) || !strings.Contains(err.Error(), "unknown-field.yaml") {
		t.Fatalf("err = %v, want an unknown field error naming stepz", err)
	}
}
