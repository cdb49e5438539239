package image

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// FieldManager owns the images this step sets, and nothing else.
const FieldManager = kube.ImageFieldManager

// ErrInvalidSpec: the step names no workload, an unsupported kind or no
// images.
var ErrInvalidSpec = errors.New("invalid image step")

// kinds are the workloads whose pod template the step updates.
var kinds = map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true}

// Executor sets the images of one workload.
type Executor struct {
	ref     step.Ref
	images  map[string]string
	timeout time.Duration
	applier *kube.Applier // as FieldManager
	waiter  *kube.Waiter
	pods    kubernetes.Interface
	// seed is the workload as the stage's backup read it (Seed), nil
	// when there is none.
	seed *unstructured.Unstructured
}

var (
	_ step.Executor = (*Executor)(nil)
	_ step.Seeder   = (*Executor)(nil)
)

// Seed takes the workload as the stage's backup read it: Run sets the
// images from it, on the condition that the workload is still at its
// version, instead of reading it again.
func (e *Executor) Seed(copies func(step.Ref) (*unstructured.Unstructured, bool)) {
	if w, held := copies(e.ref); held && w != nil && w.GetResourceVersion() != "" {
		e.seed = w
	}
}

// New checks the spec.
func New(spec v1alpha1.ImageStep, timeout time.Duration, a *kube.Applier, w *kube.Waiter, cs kubernetes.Interface) (*Executor, error) {
	var problems []string
	if !kinds[spec.Kind] {
		problems = append(problems, fmt.Sprintf("kind %q is not Deployment, DaemonSet or StatefulSet", spec.Kind))
	}
	if spec.Namespace == "" || spec.Name == "" {
		problems = append(problems, "namespace and name are required")
	}
	if len(spec.Images) == 0 {
		problems = append(problems, "images is empty")
	}
	for c, img := range spec.Images {
		if c == "" || img == "" {
			problems = append(problems, fmt.Sprintf("container %q: name and image are required", c))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%w: %s", ErrInvalidSpec, strings.Join(problems, "; "))
	}
	return &Executor{
		ref:     step.Ref{APIVersion: "apps/v1", Kind: spec.Kind, Namespace: spec.Namespace, Name: spec.Name},
		images:  spec.Images,
		timeout: timeout,
		applier: a.WithFieldManager(FieldManager),
		waiter:  w,
		pods:    cs,
	}, nil
}

// Targets is the workload.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) {
	return []step.Ref{e.ref}, nil
}

// Run sets the images, waits for the rollout and checks the pods.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	applied, failure, err := e.setImages(b.Context())
	if err != nil {
		return b.Verdict(err)
	}
	if failure != nil {
		return *failure, nil
	}
	rolled, err := e.waiter.WaitWritten(ctx, applied, b.Left())
	if err != nil {
		return b.Verdict(err)
	}
	// A rollout can be Current while the old ReplicaSet's last pods are
	// still on their way out (scaled down, not yet marked for deletion):
	// give them a short grace before calling a mismatch a failure.
	grace := time.Now().Add(min(podGrace, b.Left()))
	for {
		n, mismatch, err := e.checkPods(b.Context(), applied, rolled)
		rolled = kube.Health{} // a second look asks the API server
		if err != nil {
			return b.Verdict(fmt.Errorf("check pods of %s: %w", e.ref, err))
		}
		if mismatch == "" {
			return step.Success("%s runs %s (%d running %s checked)", e.ref, describeImages(e.images), n, plural(n, "pod")), nil
		}
		if time.Now().After(grace) {
			return step.Failure("%s rolled out, but %s", e.ref, mismatch), nil
		}
		select {
		case <-b.Context().Done():
			return step.Failure("%s rolled out, but %s", e.ref, mismatch), nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// setImages writes the step's images into the workload's pod template:
// from the backup's copy of it, on the condition that the workload has
// not moved since, or else from the workload read now. A failure is the
// step's verdict (no such workload or container); an error, the API's.
func (e *Executor) setImages(ctx context.Context) (*unstructured.Unstructured, *step.Result, error) {
	w := e.seed
	for {
		if w == nil {
			var err error
			w, err = e.applier.Get(ctx, e.ref)
			if apierrors.IsNotFound(err) {
				f := step.Failure("%s not found", e.ref)
				return nil, &f, nil
			}
			if err != nil {
				return nil, nil, fmt.Errorf("set images: %w", err)
			}
		}
		t, err := templateOf(w)
		if err != nil {
			return nil, nil, fmt.Errorf("set images on %s: %w", e.ref, err)
		}
		if missing := t.missing(e.images); len(missing) > 0 {
			f := step.Failure("%s has no container %s; it has %s", e.ref, quoteAll(missing), t.describe())
			return nil, &f, nil
		}
		patch := imagePatch(e.ref, t, e.images, ownedImages(w, FieldManager))
		var applied *unstructured.Unstructured
		if w == e.seed {
			applied, err = e.applier.ApplyAt(ctx, patch, w.GetResourceVersion())
			// Moved since the backup read it: read it now. Deleted, the
			// apply is a create of the bare patch, which the API server
			// finds invalid (a resourceVersion does not stop a create):
			// the read tells the step it is gone.
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
				w, e.seed = nil, nil
				continue
			}
		} else {
			applied, err = e.applier.Apply(ctx, patch)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("set images: %w", err)
		}
		return applied, nil, nil
	}
}

// podGrace bounds the wait for old pods to leave after a rollout.
const podGrace = 30 * time.Second

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// describeImages renders container=image pairs in name order.
func describeImages(images map[string]string) string {
	names := make([]string, 0, len(images))
	for c := range images {
		names = append(names, c)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = c + "=" + images[c]
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
