package preview

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// Apply previews server-side applies of objs with a's field manager: for
// each, the live object against the server's dry run. An object whose
// namespace or kind an earlier step creates cannot be dry-run yet: it is
// a create (or an update) with a note saying why there is no diff.
func Apply(ctx context.Context, a *kube.Applier, objs []*unstructured.Unstructured) ([]step.Change, error) {
	out := make([]step.Change, 0, len(objs))
	for _, o := range objs {
		c, err := applyOne(ctx, a, o)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func applyOne(ctx context.Context, a *kube.Applier, o *unstructured.Unstructured) (step.Change, error) {
	ref := kube.RefOf(o)
	live, err := a.Get(ctx, ref)
	switch {
	case meta.IsNoMatchError(err):
		return step.Change{Ref: ref, Action: step.Create, Note: "its kind is defined by an earlier step: no dry run"}, nil
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return step.Change{}, err
	}
	planned, err := a.DryRunApply(ctx, o)
	action := step.Update
	if live == nil {
		action = step.Create
	}
	switch {
	case kube.IsNamespaceNotFound(err):
		return step.Change{Ref: ref, Action: action, Note: fmt.Sprintf("namespace %s is created by an earlier step: no dry run", ref.Namespace)}, nil
	case refused(err):
		// The object may rely on a CRD field or version an earlier step
		// brings; say so rather than fail the whole preview.
		return step.Change{Ref: ref, Action: action, Note: "the server refuses a dry run now (an earlier step may change that): " + err.Error()}, nil
	case err != nil:
		return step.Change{}, err
	}
	d, err := Diff(live, planned)
	if err != nil {
		return step.Change{}, err
	}
	if d == "" {
		action = step.Unchanged
	}
	return step.Change{Ref: ref, Action: action, Diff: d}, nil
}

// refused: the server answered the dry run with an error about the object
// (invalid, not in the schema yet), not about the caller (no permission,
// no connection), which the preview reports as such.
func refused(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	return !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) &&
		!apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) && !apierrors.IsTooManyRequests(err) &&
		!apierrors.IsServiceUnavailable(err)
}
