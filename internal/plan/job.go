package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// validateJob checks a job step: its source, and its rollbackJob's.
func validateJob(path *field.Path, j *v1alpha1.JobStep, base string) field.ErrorList {
	errs := validateSource(path, j.Source, base)
	if j.RollbackJob != nil {
		errs = append(errs, validateSource(path.Child("rollbackJob"), *j.RollbackJob, base)...)
	}
	return errs
}
