package steps

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
	"github.com/upshift-dev/upshift/internal/steps/clusterconfig"
	"github.com/upshift-dev/upshift/internal/steps/crds"
	"github.com/upshift-dev/upshift/internal/steps/distribute"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
	helmstep "github.com/upshift-dev/upshift/internal/steps/helm"
	"github.com/upshift-dev/upshift/internal/steps/image"
	"github.com/upshift-dev/upshift/internal/steps/installation"
	"github.com/upshift-dev/upshift/internal/steps/job"
	"github.com/upshift-dev/upshift/internal/steps/manifests"
	"github.com/upshift-dev/upshift/internal/steps/recreate"
	"github.com/upshift-dev/upshift/internal/steps/wait"
)

// DefaultTimeout bounds a step whose plan sets no timeout.
const DefaultTimeout = 5 * time.Minute

// ErrInvalidStep: a step sets no kind, or more than one.
var ErrInvalidStep = errors.New("a step needs exactly one kind (crds, manifests, image, job, recreate, helm, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall)")

// Input is everything a step's executor is built from, besides the
// shared clients.
type Input struct {
	Spec v1alpha1.Step
	// Objects are the decoded objects of the step's source (crds,
	// manifests, job, recreate's from); nil for the other kinds.
	Objects []*unstructured.Unstructured
	// RollbackObjects are a job step's rollbackJob's decoded objects; nil
	// when it has none or they are not saved with the run.
	RollbackObjects []*unstructured.Unstructured
	// HelmInputs reads a helm step's chart and merged values from the
	// plan's sources (resolve.Plan.HelmInputs); nil when the run holds
	// none. Only the helm kind asks it.
	HelmInputs func() (*helmx.Chart, map[string]any, error)
	// Timeout is the step's; zero means DefaultTimeout.
	Timeout time.Duration
	// Started is when the step first started, from the run record (zero
	// before it has): a resumed recreate step tells what it already
	// re-created by it, a resumed pause goes on from it.
	Started time.Time
	// Attempt is the run attempt the step runs in: a job step keys its
	// Job by it.
	Attempt step.RunAttempt
	// Waits is what approval and pause steps read and how they wait.
	Waits step.Waits
	// Run is the run's name, which its plan's namespace and name make
	// (engine.RunName; known before the run starts, for previews): a
	// freeze names its objects by it.
	Run string
	// Runs is the runs namespace and its writer's client: a freeze
	// leaves that namespace alone and proves itself in force there.
	Runs step.Runs
}

// New builds the executor of one step: the one place where a plan's step
// becomes the executor of its kind.
func New(in Input, d *clients.Set) (step.Executor, error) {
	s := in.Spec
	timeout := timeoutOf(in)
	kinds := 0
	for _, set := range []bool{s.CRDs != nil, s.Manifests != nil, s.Image != nil, s.Job != nil, s.Recreate != nil, s.Helm != nil, s.Freeze != nil, s.Approval != nil, s.Pause != nil, s.Autopilot != nil, s.Distribute != nil, s.ClusterConfig != nil, s.Installation != nil, s.HelmUninstall != nil} {
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
		e, err = crds.New(*s.CRDs, in.Objects, timeout, d.Applier, d.Waiter)
	case s.Manifests != nil:
		e, err = manifests.New(*s.Manifests, in.Objects, timeout, d.Applier, d.Waiter)
	case s.Job != nil:
		e, err = job.New(*s.Job, in.Objects, timeout, in.Attempt, d.Applier, d.Waiter, d.Clientset)
	case s.Recreate != nil:
		e, err = recreate.New(*s.Recreate, in.Objects, in.Started, timeout, recreate.Clients{
			Dynamic: d.Dynamic, Mapper: d.Mapper, Clientset: d.Clientset, Applier: d.Applier, Waiter: d.Waiter})
	case s.Helm != nil:
		e, err = newHelm(in, timeout, d)
	case s.Freeze != nil:
		e, err = freeze.New(*s.Freeze, in.Run, s.Name, timeout, d.Applier, d.Dynamic, in.Runs)
	case s.Approval != nil, s.Pause != nil:
		e, err = wait.New(s, in.Started, in.Waits)
	case s.Autopilot != nil:
		e, err = autopilot.New(*s.Autopilot, in.Attempt, s.Name, in.Started, timeout,
			autopilot.Clients{Applier: d.Applier, Dynamic: d.Dynamic, Clientset: d.Clientset})
	case s.Distribute != nil:
		e, err = newDistribute(in, timeout, d)
	case s.ClusterConfig != nil:
		e, err = clusterconfig.New(*s.ClusterConfig, timeout, d.Dynamic)
	case s.Installation != nil:
		e, err = installation.New(*s.Installation, in.Attempt, d.Dynamic)
	case s.HelmUninstall != nil:
		e, err = helmstep.NewUninstall(*s.HelmUninstall, timeout, HelmClients(d))
	default:
		e, err = image.New(*s.Image, timeout, d.Applier, d.Waiter, d.Clientset)
	}
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", s.Name, err)
	}
	return e, nil
}

// HelmClients are the shared clients a helm step (and the rollback of its
// release) uses.
func HelmClients(d *clients.Set) helmstep.Clients {
	return helmstep.Clients{Helm: d.Helm, Waiter: d.Waiter, Mapper: d.Mapper}
}

// TraitsOf is what the kind of s declares of itself (step.Traits); none
// for a step that sets no kind.
func TraitsOf(s v1alpha1.Step) step.Traits {
	switch {
	case s.CRDs != nil:
		return crds.Traits
	case s.Manifests != nil:
		return manifests.Traits
	case s.Image != nil:
		return image.Traits
	case s.Job != nil:
		return job.Traits
	case s.Recreate != nil:
		return recreate.Traits
	case s.Helm != nil:
		return helmstep.Traits
	case s.Freeze != nil:
		return freeze.Traits
	case s.Approval != nil, s.Pause != nil:
		return wait.Traits
	case s.Autopilot != nil:
		return autopilot.Traits
	case s.Distribute != nil:
		return distribute.Traits
	case s.ClusterConfig != nil:
		return clusterconfig.Traits
	case s.Installation != nil:
		return installation.Traits
	case s.HelmUninstall != nil:
		return helmstep.Traits
	}
	return step.Traits{}
}

// NewKeeper builds the step.Keeper of a step whose kind keeps a state in
// its stage's backup (a helm step's release revision), nil for the other
// kinds. It needs none of the run's sources.
func NewKeeper(in Input, d *clients.Set) step.Keeper {
	if h := in.Spec.Helm; h != nil {
		return helmstep.NewRelease(h.Release, h.Namespace, timeoutOf(in), HelmClients(d))
	}
	if u := in.Spec.HelmUninstall; u != nil {
		return helmstep.NewRelease(u.Release, u.Namespace, timeoutOf(in), HelmClients(d))
	}
	return nil
}

// NewReverter builds the step.Reverter of a step whose kind undoes in a
// rollback what restoring its stage's objects cannot (a helm step's
// release, a job step's rollbackJob, a distribute step's Jobs of nodes
// that joined late, an installation step's record marked Failed) or says
// what it cannot undo (an autopilot step's k0s), nil for the other kinds. It needs
// none of the run's sources but the rollbackJob's (in.RollbackObjects).
func NewReverter(in Input, d *clients.Set) step.Reverter {
	switch s := in.Spec; {
	case s.Helm != nil:
		return helmstep.NewRelease(s.Helm.Release, s.Helm.Namespace, timeoutOf(in), HelmClients(d))
	case s.HelmUninstall != nil:
		return helmstep.NewRelease(s.HelmUninstall.Release, s.HelmUninstall.Namespace, timeoutOf(in), HelmClients(d))
	case s.Job != nil && s.Job.RollbackJob != nil:
		return job.NewReverter(*s.Job, in.RollbackObjects, timeoutOf(in), in.Attempt, d.Applier, d.Waiter, d.Clientset)
	case s.Autopilot != nil:
		return autopilot.NewReverter(*s.Autopilot, in.Attempt, s.Name, d.Dynamic, d.Clientset)
	case s.Distribute != nil:
		e, err := newDistribute(in, timeoutOf(in), d)
		if err != nil {
			return nil // validation refuses such a step; nothing of it ran
		}
		return distribute.NewReverter(e)
	case s.Installation != nil:
		return installation.NewReverter(in.Attempt, d.Dynamic)
	}
	return nil
}

func newDistribute(in Input, timeout time.Duration, d *clients.Set) (*distribute.Executor, error) {
	return distribute.New(*in.Spec.Distribute, in.Attempt, in.Spec.Name, in.Started, timeout,
		distribute.Clients{Applier: d.Applier, Clientset: d.Clientset})
}

func timeoutOf(in Input) time.Duration {
	if in.Timeout > 0 {
		return in.Timeout
	}
	if t := TraitsOf(in.Spec).Timeout; t > 0 {
		return t
	}
	return DefaultTimeout
}

// NewFinisher builds the step.Finisher of a step whose kind has one (a
// freeze), nil for the other kinds. It needs none of the run's sources,
// so a run whose sources cannot be read is still finished.
func NewFinisher(in Input, d *clients.Set) (step.Finisher, error) {
	if in.Spec.Freeze == nil {
		return nil, nil
	}
	e, err := New(in, d)
	if err != nil {
		return nil, err
	}
	f, ok := e.(step.Finisher)
	if !ok {
		return nil, fmt.Errorf("step %q: its executor %T cannot finish", in.Spec.Name, e)
	}
	return f, nil
}

// newHelm builds a helm step's executor from the chart and values saved
// with the run.
func newHelm(in Input, timeout time.Duration, d *clients.Set) (step.Executor, error) {
	var chart *helmx.Chart
	var values map[string]any
	if in.HelmInputs != nil {
		var err error
		if chart, values, err = in.HelmInputs(); err != nil {
			return nil, fmt.Errorf("step %q: %w", in.Spec.Name, err)
		}
	}
	if chart == nil {
		return nil, fmt.Errorf("step %q: the chart is not saved with the run: apply the plan again to save it", in.Spec.Name)
	}
	return helmstep.New(*in.Spec.Helm, chart, values, timeout, HelmClients(d))
}
