package steps

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/crds"
	"github.com/upshift-dev/upshift/internal/steps/image"
	"github.com/upshift-dev/upshift/internal/steps/job"
	"github.com/upshift-dev/upshift/internal/steps/manifests"
	"github.com/upshift-dev/upshift/internal/steps/recreate"
)

// DefaultTimeout bounds a step whose plan sets no timeout.
const DefaultTimeout = 5 * time.Minute

// ErrInvalidStep: a step sets no kind, or more than one.
var ErrInvalidStep = errors.New("a step needs exactly one kind (crds, manifests, image, job or recreate)")

// New builds the executor of one step. objs are the decoded objects of the
// step's source (crds, manifests, job, recreate's from; nil for image).
// timeout is the step's timeout; zero means DefaultTimeout. started is when
// the step first started, from the run record (zero before it has): a
// resumed recreate step tells what it already re-created by it. at is the
// run attempt the step runs in: a job step keys its Job by it.
func New(s v1alpha1.Step, objs []*unstructured.Unstructured, timeout time.Duration, started time.Time, at step.RunAttempt, d *clients.Set) (step.Executor, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	kinds := 0
	for _, set := range []bool{s.CRDs != nil, s.Manifests != nil, s.Image != nil, s.Job != nil, s.Recreate != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, fmt.Errorf("step %q: %w", s.Name, ErrInvalidStep)
	}
	var (
		e   step.Executor
		err error
	)
	switch {
	case s.CRDs != nil:
		e, err = crds.New(*s.CRDs, objs, timeout, d.Applier, d.Waiter)
	case s.Manifests != nil:
		e, err = manifests.New(*s.Manifests, objs, timeout, d.Applier, d.Waiter)
	case s.Job != nil:
		e, err = job.New(*s.Job, objs, timeout, at, d.Applier, d.Waiter, d.Clientset)
	case s.Recreate != nil:
		e, err = recreate.New(*s.Recreate, objs, started, timeout, recreate.Clients{
			Dynamic: d.Dynamic, Mapper: d.Mapper, Clientset: d.Clientset, Applier: d.Applier, Waiter: d.Waiter})
	default:
		e, err = image.New(*s.Image, timeout, d.Applier, d.Waiter, d.Clientset)
	}
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", s.Name, err)
	}
	return e, nil
}
