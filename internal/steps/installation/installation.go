package installation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// GVR and GVK of embedded-cluster's Installation.
var (
	GVR = schema.GroupVersionResource{Group: "embeddedcluster.replicated.com", Version: "v1beta1", Resource: "installations"}
	GVK = schema.GroupVersionKind{Group: "embeddedcluster.replicated.com", Version: "v1beta1", Kind: "Installation"}
)

const (
	// DRLabel is embedded-cluster's label on every Installation.
	DRLabel = "replicated.com/disaster-recovery"
	// KeyLabel holds the key of the run's attempt that created it.
	KeyLabel = "upshift.dev/installation-for"
	// NameFormat is embedded-cluster's: the creation time.
	NameFormat = "20060102150405"
	// Failed is the state a rollback leaves.
	Failed = "Failed"
)

// ErrInvalidSpec: the step cannot be built as written.
var ErrInvalidSpec = errors.New("invalid installation step")

// Executor records one state.
type Executor struct {
	spec v1alpha1.InstallationStep
	key  string
	dyn  dynamic.Interface
}

var _ step.Executor = (*Executor)(nil)

// New builds the step of attempt.
func New(spec v1alpha1.InstallationStep, attempt step.RunAttempt, dyn dynamic.Interface) (*Executor, error) {
	if spec.State == "" {
		return nil, fmt.Errorf("%w: it needs a state", ErrInvalidSpec)
	}
	return &Executor{spec: spec, key: key(attempt), dyn: dyn}, nil
}

// key is an attempt's label value: a hash, as the run's name may be long.
func key(a step.RunAttempt) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", a.Run, a.Attempt)))
	return hex.EncodeToString(sum[:])[:16]
}

// Targets are none: the Reverter marks the record Failed instead of a
// restore deleting it.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) { return nil, nil }

// Run finds or creates the attempt's Installation and sets its state.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	in, created, err := e.ensure(ctx)
	if errors.Is(err, errNameTaken) {
		return step.Progress(time.Second, "an Installation of this second's name exists: naming ours a second later"), nil
	}
	if err != nil {
		return step.Result{}, err
	}
	if err := setState(ctx, e.dyn, in, e.spec.State, e.spec.Reason); err != nil {
		return step.Result{}, err
	}
	verb := "is"
	if created {
		verb = "created,"
	}
	return step.Success("Installation %s %s %s", in.GetName(), verb, stateText(e.spec.State, e.spec.Reason)), nil
}

func stateText(state, reason string) string {
	if reason == "" {
		return state
	}
	return fmt.Sprintf("%s (%s)", state, reason)
}

var errNameTaken = errors.New("name taken")

// ensure is the attempt's Installation, created from the newest one when
// there is none yet.
func (e *Executor) ensure(ctx context.Context) (*unstructured.Unstructured, bool, error) {
	list, err := e.dyn.Resource(GVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("list Installations: %w", err)
	}
	items := list.Items
	for i := range items {
		if items[i].GetLabels()[KeyLabel] == e.key {
			return &items[i], false, nil
		}
	}
	spec := map[string]any{}
	if newest := latest(items); newest != nil {
		spec, _, _ = unstructured.NestedMap(newest.Object, "spec")
	}
	if spec, err = mergeSpec(spec, e.spec.Spec); err != nil {
		return nil, false, fmt.Errorf("%w: spec: %v", ErrInvalidSpec, err)
	}
	in := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	in.SetGroupVersionKind(GVK)
	in.SetName(time.Now().UTC().Format(NameFormat))
	in.SetLabels(map[string]string{DRLabel: "ec-install", KeyLabel: e.key})
	made, err := e.dyn.Resource(GVR).Create(ctx, in, metav1.CreateOptions{FieldManager: "upshift"})
	if apierrors.IsAlreadyExists(err) {
		return nil, false, errNameTaken
	}
	if err != nil {
		return nil, false, fmt.Errorf("create Installation %s: %w", in.GetName(), err)
	}
	return made, true, nil
}

// latest is the newest Installation: by name, which is its creation time.
func latest(items []unstructured.Unstructured) *unstructured.Unstructured {
	if len(items) == 0 {
		return nil
	}
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() > items[j].GetName() })
	return &items[0]
}

// mergeSpec merges patch over spec (RFC 7386).
func mergeSpec(spec map[string]any, patch *apiextensionsv1.JSON) (map[string]any, error) {
	if patch == nil || len(patch.Raw) == 0 {
		return spec, nil
	}
	doc, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if doc, err = jsonpatch.MergePatch(doc, patch.Raw); err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(doc, &out)
}

// setState writes status.state and reason unless they are so already.
func setState(ctx context.Context, dyn dynamic.Interface, in *unstructured.Unstructured, state, reason string) error {
	st, _, _ := unstructured.NestedString(in.Object, "status", "state")
	rs, _, _ := unstructured.NestedString(in.Object, "status", "reason")
	if st == state && rs == reason {
		return nil
	}
	out := in.DeepCopy()
	_ = unstructured.SetNestedField(out.Object, state, "status", "state")
	_ = unstructured.SetNestedField(out.Object, reason, "status", "reason")
	if _, err := dyn.Resource(GVR).UpdateStatus(ctx, out, metav1.UpdateOptions{FieldManager: "upshift"}); err != nil {
		return fmt.Errorf("set Installation %s's state to %s: %w", in.GetName(), state, err)
	}
	return nil
}

var _ step.Accessor = (*Executor)(nil)

// Access is what preflight checks (the kind served, the rights): the step
// lists and creates Installations and sets their state through the
// status subresource, as its Reverter does; it never patches or deletes
// one.
func (e *Executor) Access() []step.Access {
	return []step.Access{{Verb: "list", Kind: GVK}, {Verb: "create", Kind: GVK}, {Verb: "update", Kind: GVK, Subresource: "status"}}
}
