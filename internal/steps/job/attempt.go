package job

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

// The annotations that tie a Job to the run attempt that created it.
// Annotations, not labels: a run's name may be longer than a label value.
const (
	AnnotationRun     = "upshift.dev/run"
	AnnotationAttempt = "upshift.dev/run-attempt"
)

// origin says whose a Job of the step's name is.
type origin int

const (
	// ours: created by this attempt of this run (a resumed run finds it).
	ours origin = iota
	// earlierAttempt: created by another attempt of this run, whose
	// rollback undid its work (a down-migration ran after the migration,
	// or the next down-migration must run again).
	earlierAttempt
	// foreign: not created by this run: by hand, by another run, or by a
	// version of Upshift that did not mark its Jobs.
	foreign
)

// originOf tells whose a Job with these annotations is. A zero
// RunAttempt marks nothing, so every Job counts as ours.
func originOf(annotations map[string]string, at step.RunAttempt) origin {
	if at.Run == "" {
		return ours
	}
	if annotations[AnnotationRun] != at.Run {
		return foreign
	}
	if annotations[AnnotationAttempt] == strconv.Itoa(at.Attempt) {
		return ours
	}
	return earlierAttempt
}

// describeOrigin names who created a Job, for messages.
func describeOrigin(annotations map[string]string) string {
	run := annotations[AnnotationRun]
	if run == "" {
		return "it was not created by an Upshift run"
	}
	return fmt.Sprintf("it was created by run %s, attempt %s", run, annotations[AnnotationAttempt])
}

// marked is the step's Job with the annotations of the run attempt: a
// copy, since the resolved plan's objects are shared between steps.
func marked(j *unstructured.Unstructured, at step.RunAttempt) *unstructured.Unstructured {
	if at.Run == "" {
		return j
	}
	j = j.DeepCopy()
	ann := j.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationRun] = at.Run
	ann[AnnotationAttempt] = strconv.Itoa(at.Attempt)
	j.SetAnnotations(ann)
	return j
}

// deleteEarlier deletes the Job an earlier attempt left and waits until it
// is gone, so this attempt runs its own. Foreground propagation: the old
// pods go first, so `kubectl logs job/NAME` and the failure diagnosis see
// only this attempt's pods. The UID precondition keeps a Job created
// meanwhile by someone else from being deleted in its place.
func (e *Executor) deleteEarlier(ctx context.Context, old *unstructured.Unstructured) error {
	fg := metav1.DeletePropagationForeground
	uid := old.GetUID()
	err := e.cs.BatchV1().Jobs(e.ref.Namespace).Delete(ctx, e.ref.Name, metav1.DeleteOptions{
		PropagationPolicy: &fg,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Job attempt %s left: %w", old.GetAnnotations()[AnnotationAttempt], err)
	}
	now, err := e.existing(ctx) // waits out the deletion
	if err != nil {
		return err
	}
	if now != nil {
		return fmt.Errorf("a Job of the same name appeared while the one attempt %s left was deleted (%s)",
			old.GetAnnotations()[AnnotationAttempt], describeOrigin(now.GetAnnotations()))
	}
	return nil
}
