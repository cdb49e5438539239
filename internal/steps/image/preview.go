package image

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview dry-runs the image patch Run would apply.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	w, err := e.applier.Get(ctx, e.ref)
	if apierrors.IsNotFound(err) {
		return []step.Change{{Ref: e.ref, Action: step.Update, Note: "not found now: an earlier step must create it"}}, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := templateOf(w)
	if err != nil {
		return nil, err
	}
	patch := imagePatch(e.ref, t, e.images, ownedImages(w, FieldManager))
	return preview.Apply(ctx, e.applier, []*unstructured.Unstructured{patch})
}
