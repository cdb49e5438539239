package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deletionPoll is how often Run looks whether a Job being deleted is gone.
const deletionPoll = 250 * time.Millisecond

// existing returns the Job of the step's name, or nil when there is none.
// A Job being deleted (an operator clearing a failed run, with foreground
// deletion) is waited out: it is about to be gone.
func (e *Executor) existing(ctx context.Context) (*unstructured.Unstructured, error) {
	for {
		u, err := e.applier.Get(ctx, e.ref)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		case u.GetDeletionTimestamp() == nil:
			return u, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s is still being deleted", e.ref)
		case <-time.After(deletionPoll):
		}
	}
}

// sameSpec tells whether applying the step's Job would leave the existing
// Job's spec as it is. The server answers, with a dry run: it fills in
// defaults and the generated selector the same way on both sides, and
// refuses outright a change of the (immutable) pod template.
func (e *Executor) sameSpec(ctx context.Context, existing *unstructured.Unstructured) (bool, error) {
	merged, err := e.applier.DryRunApply(ctx, e.job)
	if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "immutable") {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(merged.Object["spec"], existing.Object["spec"]), nil
}

// completed tells whether the Job has its Complete condition.
func completed(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == string(batchv1.JobComplete) && m["status"] == "True" {
			return true
		}
	}
	return false
}
