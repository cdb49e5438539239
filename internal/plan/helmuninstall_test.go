package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A helmUninstall step names a release and its namespace, checked as a
// helm step's are.
func TestHelmUninstallStep(t *testing.T) {
	path := field.NewPath("s")
	if errs := validateStepKind(path, v1alpha1.Step{Name: "drop", HelmUninstall: &v1alpha1.HelmUninstallStep{Release: "legacy", Namespace: "addons"}}, ""); len(errs) > 0 {
		t.Fatalf("a valid step: %v", errs)
	}
	errs := validateStepKind(path, v1alpha1.Step{Name: "drop", HelmUninstall: &v1alpha1.HelmUninstallStep{Release: "Legacy_1"}}, "")
	got := errs.ToAggregate().Error()
	for _, want := range []string{`s.helmUninstall.release: Invalid value: "Legacy_1": a release name is lowercase`, "s.helmUninstall.namespace: Required value"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}
