package job

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/source"
)

// ErrInvalidJob: the source does not hold exactly one named, namespaced
// batch/v1 Job.
var ErrInvalidJob = errors.New("invalid job source")

// jobOf checks that objs, decoded from src, are one Job the step can find
// again by name.
func jobOf(src v1alpha1.Source, objs []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	problems := jobProblems(objs)
	if len(problems) > 0 {
		return nil, fmt.Errorf("job from %s: %w: %s", source.Describe(src), ErrInvalidJob, strings.Join(problems, "; "))
	}
	return objs[0], nil
}

func jobProblems(objs []*unstructured.Unstructured) []string {
	if len(objs) != 1 {
		return []string{fmt.Sprintf("it holds %d objects, want exactly one Job", len(objs))}
	}
	o := objs[0]
	var problems []string
	if o.GetAPIVersion() != "batch/v1" || o.GetKind() != "Job" {
		problems = append(problems, fmt.Sprintf("it holds a %s %s, want a batch/v1 Job", o.GetAPIVersion(), o.GetKind()))
	}
	if o.GetName() == "" {
		// generateName would create a new Job on every resumed run.
		problems = append(problems, "metadata.name is required (a resumed run finds its Job by name)")
	}
	if o.GetNamespace() == "" {
		problems = append(problems, "metadata.namespace is required")
	}
	sort.Strings(problems)
	return problems
}
