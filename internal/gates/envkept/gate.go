package envkept

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/object"
	"github.com/upshift-dev/upshift/internal/step"
)

// Before is the stage's backup as the gate reads it: the objects as they
// were before the stage changed anything (backup.Snapshot is one). An
// interface, so that gates take the runner's snapshot without importing
// the backup's IO.
type Before interface {
	// Held returns what the backup holds for ref, matched by group, kind,
	// namespace and name: held is false when the backup does not name the
	// object, obj nil when it names it but the object did not exist.
	Held(ref object.Ref) (obj *unstructured.Unstructured, held bool)
}

// ErrInvalidSpec: the gate needs a workload kind, namespace, name and
// container.
var ErrInvalidSpec = errors.New("an envKept gate needs kind (Deployment, DaemonSet or StatefulSet), namespace, name and container")

// ErrNoBackup: the gate was built without the stage's backup to compare
// with.
var ErrNoBackup = errors.New("an envKept gate compares with the stage's backup, and there is none")

// StageHint is the fix for a gate whose workload no step of its stage
// changes: plan validation and preflight say it too.
const StageHint = "put the envKept gate in the stage that changes the workload: only that stage's backup holds it as it was"

var resources = map[string]string{"Deployment": "deployments", "DaemonSet": "daemonsets", "StatefulSet": "statefulsets"}

// getBackoff retries a GET that failed for a blip, within the gate's timeout.
var getBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 8, Cap: 5 * time.Second}

// Gate checks one container's variables against the backup.
type Gate struct {
	spec    v1alpha1.EnvKeptGate
	ref     object.Ref
	gvr     schema.GroupVersionResource
	before  Before
	timeout time.Duration
	dyn     dynamic.Interface
}

var _ step.Gate = (*Gate)(nil)

// New checks the spec. before is the stage's backup.
func New(spec v1alpha1.EnvKeptGate, timeout time.Duration, before Before, dyn dynamic.Interface) (*Gate, error) {
	res, ok := resources[spec.Kind]
	if !ok || spec.Namespace == "" || spec.Name == "" || spec.Container == "" {
		return nil, ErrInvalidSpec
	}
	if before == nil {
		return nil, ErrNoBackup
	}
	return &Gate{
		spec:    spec,
		ref:     Ref(spec),
		gvr:     schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: res},
		before:  before,
		timeout: timeout,
		dyn:     dyn,
	}, nil
}

// Ref names the gate's workload.
func Ref(spec v1alpha1.EnvKeptGate) object.Ref {
	return object.Ref{APIVersion: "apps/v1", Kind: spec.Kind, Namespace: spec.Namespace, Name: spec.Name}
}

// Check compares the live container's variables with the backup's. It
// does not wait for a change: a workload's spec does not drift back by
// itself, so a difference fails at once.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	old, held := g.before.Held(g.ref)
	switch {
	case !held:
		return step.Failure("%s is not in the stage's backup (no step of the stage changes it): %s", g.ref, StageHint), nil
	case old == nil:
		return step.Success("%s did not exist before the stage: no variables to keep", g.ref), nil
	}
	live, err := g.get(ctx)
	if apierrors.IsNotFound(err) {
		return step.Failure("%s is gone: it existed before the stage", g.ref), nil
	}
	if err != nil {
		return step.Result{}, fmt.Errorf("envKept gate: get %s: %w", g.ref, err)
	}
	return Judge(g.spec, old, live), nil
}

func (g *Gate) get(ctx context.Context) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	var live *unstructured.Unstructured
	again := func(err error) bool { return !apierrors.IsNotFound(err) && kube.Transient(err) }
	err := kube.Retry(ctx, getBackoff, again, func(int) error {
		var err error
		live, err = g.dyn.Resource(g.gvr).Namespace(g.spec.Namespace).Get(ctx, g.spec.Name, metav1.GetOptions{})
		return err
	})
	return live, err
}

// Judge compares the container's variables in the workload as it was
// (before) and as it is (live). Its messages name variables, never values.
func Judge(spec v1alpha1.EnvKeptGate, before, live *unstructured.Unstructured) step.Result {
	what := fmt.Sprintf("%s container %s", Ref(spec), spec.Container)
	was, found, names, err := containerEnv(before, spec.Container)
	switch {
	case err != nil:
		return step.Failure("%s: the backup's copy: %v", what, err)
	case !found:
		return step.Failure("%s: the workload had no such container before the stage (its containers: %s): check the container's name", what, strings.Join(names, ", "))
	}
	is, found, names, err := containerEnv(live, spec.Container)
	switch {
	case err != nil:
		return step.Failure("%s: %v", what, err)
	case !found:
		return step.Failure("%s: the container is gone (its containers now: %s), and its variables with it", what, strings.Join(names, ", "))
	}
	if changes := Diff(was, is, spec.Names); len(changes) > 0 {
		parts := make([]string, len(changes))
		for i, c := range changes {
			parts[i] = c.String()
		}
		return step.Failure("%s: %d %s not kept: %s", what, len(changes), plural(len(changes), "variable"), strings.Join(parts, "; "))
	}
	kept := Kept(was, is, spec.Names)
	msg := fmt.Sprintf("%s keeps %d %s as before the stage", what, len(kept), plural(len(kept), "variable"))
	if unset := Unset(was, is, spec.Names); len(unset) > 0 {
		msg += fmt.Sprintf(" (%s unset before and after: check the %s)", strings.Join(unset, ", "), plural(len(unset), "name"))
	}
	return step.Success("%s", msg)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// refOf names an object for messages.
func refOf(u *unstructured.Unstructured) object.Ref {
	return object.Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}
