package recreate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// FieldManager sets the annotation of annotate mode: it owns that one
// field, so applying it never drops fields other managers own.
const FieldManager = kube.RecreateFieldManager

// Annotation is what annotate mode sets, to the time the step started: an
// operator that restarts on any change of its objects re-creates them.
const Annotation = "upshift.dev/recreated-at"

// Clients are what the step reads and writes with.
type Clients struct {
	Dynamic   dynamic.Interface
	Mapper    meta.RESTMapper
	Clientset kubernetes.Interface
	Applier   *kube.Applier
	Waiter    *kube.Waiter
}

// Executor re-creates the objects of one step.
type Executor struct {
	spec  v1alpha1.RecreateStep
	gvk   schema.GroupVersionKind
	from  []*unstructured.Unstructured
	since time.Time
	// timeout bounds Run.
	timeout time.Duration
	Clients
}

var _ step.Executor = (*Executor)(nil)

// New builds the step. from are the decoded `from` manifests (nil without
// them); started is when the step first started, from the run record (zero
// when the step has not started: Run then takes the current time).
func New(spec v1alpha1.RecreateStep, from []*unstructured.Unstructured, started time.Time, timeout time.Duration, c Clients) (*Executor, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("a recreate step needs a positive timeout")
	}
	return &Executor{
		spec:    spec,
		gvk:     schema.FromAPIVersionAndKind(spec.APIVersion, spec.Kind),
		from:    from,
		since:   started,
		timeout: timeout,
		Clients: c,
	}, nil
}

// Targets are the `from` objects: the step writes them. Objects their
// owners re-create are left to the owners (see the package doc).
func (e *Executor) Targets(context.Context) ([]step.Ref, error) {
	refs := make([]step.Ref, 0, len(e.from))
	for _, o := range e.from {
		refs = append(refs, kube.RefOf(o))
	}
	return refs, nil
}

// Run deletes (or annotates) the matched objects that are not re-created
// yet and waits until they are back and Current.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	since := e.since
	if since.IsZero() {
		since = time.Now()
	}
	found, err := e.find(b.Context(), since)
	if err != nil {
		return b.Verdict(err)
	}
	if found.total() == 0 && len(e.from) == 0 {
		return step.Success("nothing matched: no %s in namespaces %s", e.what(), e.spec.Namespace), nil
	}
	if e.spec.Mode == "annotate" {
		return e.annotate(ctx, b, found, since)
	}
	if orphans := found.orphans(e.fromKeys()); len(orphans) > 0 {
		return step.Failure("nothing deleted: %s would not come back: no owner re-creates %s and the step's `from` does not hold %s",
			names(orphans), them(len(orphans)), them(len(orphans))), nil
	}
	return e.recreate(ctx, b, found)
}

// what names the matched objects: "pods matching app=gw".
func (e *Executor) what() string {
	w := strings.ToLower(e.spec.Kind) + "s"
	if e.spec.Selector != "" {
		w += " matching " + e.spec.Selector
	}
	return w
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// names lists objects for a message, at most five.
func names(objs []*unstructured.Unstructured) string {
	var out []string
	for i, o := range objs {
		if i == 5 {
			out = append(out, fmt.Sprintf("and %d more", len(objs)-5))
			break
		}
		out = append(out, kube.RefOf(o).String())
	}
	return strings.Join(out, ", ")
}
