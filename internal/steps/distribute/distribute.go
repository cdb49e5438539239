package distribute

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// Poll is how long until a step whose Jobs still run looks again.
var Poll = 2 * time.Second

// ErrInvalidSpec: the step cannot be built as written (plan validation
// refuses it first).
var ErrInvalidSpec = errors.New("invalid distribute step")

// ErrForeignJob: a Job of a node's name is not Upshift's; the step never
// replaces it.
var ErrForeignJob = errors.New("a Job of the step's name is someone else's")

// Clients are what the step reads and writes with.
type Clients struct {
	Applier   *kube.Applier
	Clientset kubernetes.Interface
}

// Executor runs one distribute step.
type Executor struct {
	spec    v1alpha1.DistributeStep
	key     string
	timeout time.Duration
	started time.Time
	c       Clients
}

var (
	_ step.Executor  = (*Executor)(nil)
	_ step.Renderer  = (*Executor)(nil)
	_ step.Reader    = (*Executor)(nil)
	_ step.Previewer = (*Executor)(nil)
)

// New builds the step named stepName of attempt. started is when it first
// started (zero: now): its timeout runs from then, across its calls and a
// driver's restart.
func New(spec v1alpha1.DistributeStep, attempt step.RunAttempt, stepName string, started time.Time, timeout time.Duration, c Clients) (*Executor, error) {
	switch {
	case timeout <= 0:
		return nil, fmt.Errorf("%w: it needs a positive timeout", ErrInvalidSpec)
	case spec.Image == "" || len(spec.Command) == 0:
		return nil, fmt.Errorf("%w: it needs an image and a command", ErrInvalidSpec)
	}
	if started.IsZero() {
		started = time.Now()
	}
	return &Executor{spec: spec, key: stepKey(attempt, stepName), timeout: timeout, started: started, c: c}, nil
}

// Targets are the Jobs of the nodes there are now and the step's Secret:
// absent in the stage's backup, so a rollback deletes them (the Reverter
// deletes those of nodes that joined later).
func (e *Executor) Targets(ctx context.Context) ([]step.Ref, error) {
	nodes, err := e.nodes(ctx)
	if err != nil {
		return nil, err
	}
	refs := make([]step.Ref, 0, len(nodes)+1)
	for _, n := range nodes {
		refs = append(refs, step.Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: e.namespace(), Name: JobName(n)})
	}
	if len(e.spec.SecretEnv) > 0 {
		refs = append(refs, step.Ref{APIVersion: "v1", Kind: "Secret", Namespace: e.namespace(), Name: e.secretName()})
	}
	return refs, nil
}

// Run looks once at every node's Job: creates those missing, fails on one
// that failed, and once all succeeded deletes them and the Secret.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	nodes, err := e.nodes(ctx)
	if err != nil {
		return step.Result{}, err
	}
	if len(nodes) == 0 {
		return step.Failure("no node to put the artifacts on"), nil
	}
	if res, err := e.ensureSecret(ctx); err != nil || res != nil {
		return deref(res), err
	}
	jobs, err := e.jobs(ctx)
	if err != nil {
		return step.Result{}, err
	}
	var done, running, starting []string
	for _, n := range nodes {
		j := jobs[n]
		switch {
		case j == nil:
			err := e.create(ctx, n)
			if errors.Is(err, ErrForeignJob) {
				return step.Failure("%v", err), nil
			}
			if err != nil {
				return step.Result{}, err
			}
			starting = append(starting, n)
		case failed(j) != "":
			return e.failure(ctx, n, j), nil
		case j.Status.Succeeded > 0:
			done = append(done, n)
		default:
			running = append(running, n)
		}
	}
	if len(done) == len(nodes) {
		if err := e.cleanup(ctx); err != nil {
			return step.Result{}, err
		}
		return step.Success("artifacts on every node (%d: %s); Jobs and Secret deleted", len(nodes), strings.Join(nodes, ", ")), nil
	}
	msg := fmt.Sprintf("artifacts on %d/%d nodes", len(done), len(nodes))
	for _, part := range []struct {
		what  string
		nodes []string
	}{{"copying", running}, {"starting", starting}} {
		if len(part.nodes) > 0 {
			msg += fmt.Sprintf("; %s: %s", part.what, strings.Join(part.nodes, ", "))
		}
	}
	if time.Since(e.started) > e.timeout {
		return step.Failure("timed out after %s: %s", e.timeout, msg), nil
	}
	return step.Progress(Poll, "%s", msg), nil
}

func deref(r *step.Result) step.Result {
	if r == nil {
		return step.Result{}
	}
	return *r
}

// create writes node's Job. A Job of that name left by another attempt
// or step is deleted first (its template cannot be changed in place): the
// next look creates ours.
func (e *Executor) create(ctx context.Context, node string) error {
	name := JobName(node)
	old, err := e.c.Clientset.BatchV1().Jobs(e.namespace()).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && old.Labels["app.kubernetes.io/managed-by"] != "upshift":
		return fmt.Errorf("%w: Job %s/%s exists and is not Upshift's (embedded-cluster's own copy?): wait until it ends and delete it, or set the step's namespace", ErrForeignJob, old.Namespace, old.Name)
	case err == nil && old.Labels[StepLabel] != e.key:
		return e.deleteJob(ctx, old) // an earlier attempt's
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("read Job %s/%s: %w", e.namespace(), name, err)
	}
	if _, err := e.c.Applier.Apply(ctx, toUnstructured(e.job(node))); err != nil {
		return fmt.Errorf("create the Job of node %s: %w", node, err)
	}
	return nil
}

// jobs are the step's Jobs, by node.
func (e *Executor) jobs(ctx context.Context) (map[string]*batchv1.Job, error) {
	list, err := e.c.Clientset.BatchV1().Jobs(e.namespace()).List(ctx, metav1.ListOptions{LabelSelector: StepLabel + "=" + e.key})
	if err != nil {
		return nil, fmt.Errorf("list the step's Jobs in %s: %w", e.namespace(), err)
	}
	out := map[string]*batchv1.Job{}
	for i := range list.Items {
		j := &list.Items[i]
		if j.DeletionTimestamp == nil {
			out[j.Annotations["upshift.dev/node"]] = j
		}
	}
	return out, nil
}

// Rendered are the Jobs and the Secret the step would write now, for
// preflight (the Secret without its values).
func (e *Executor) Rendered(ctx context.Context) ([]step.Ref, []*unstructured.Unstructured, error) {
	nodes, err := e.nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	var objs []*unstructured.Unstructured
	for _, n := range nodes {
		objs = append(objs, toUnstructured(e.job(n)))
	}
	if len(e.spec.SecretEnv) > 0 {
		objs = append(objs, toUnstructured(e.secret(nil)))
	}
	refs := make([]step.Ref, len(objs))
	for i, o := range objs {
		refs[i] = kube.RefOf(o)
	}
	return refs, objs, nil
}
