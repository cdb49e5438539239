package clusterconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// GVR and GVK of k0s's ClusterConfig.
var (
	GVR = schema.GroupVersionResource{Group: "k0s.k0sproject.io", Version: "v1beta1", Resource: "clusterconfigs"}
	GVK = schema.GroupVersionKind{Group: "k0s.k0sproject.io", Version: "v1beta1", Kind: "ClusterConfig"}
)

// ErrInvalidSpec: the step cannot be built as written (plan validation
// refuses it first).
var ErrInvalidSpec = errors.New("invalid clusterConfig step")

// conflictRetries bounds the reads again after k0s changed the object
// between a read and a write.
const conflictRetries = 5

// Executor updates one ClusterConfig.
type Executor struct {
	spec      v1alpha1.ClusterConfigStep
	ns, name  string
	patches   [][]byte
	timeout   time.Duration
	dyn       dynamic.Interface
	pauseOnly []byte // the images patch with the pause image alone; nil without one
}

var (
	_ step.Executor  = (*Executor)(nil)
	_ step.Previewer = (*Executor)(nil)
)

// New builds the step.
func New(spec v1alpha1.ClusterConfigStep, timeout time.Duration, dyn dynamic.Interface) (*Executor, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("%w: it needs a positive timeout", ErrInvalidSpec)
	}
	e := &Executor{spec: spec, ns: or(spec.Namespace, "kube-system"), name: or(spec.Name, "k0s"), timeout: timeout, dyn: dyn}
	if spec.Images != nil {
		e.patches = append(e.patches, wrap("images", spec.Images.Raw))
		var images map[string]json.RawMessage
		if err := json.Unmarshal(spec.Images.Raw, &images); err != nil {
			return nil, fmt.Errorf("%w: images: %v", ErrInvalidSpec, err)
		}
		if p, ok := images["pause"]; ok {
			e.pauseOnly = wrap("images", []byte(`{"pause":`+string(p)+`}`))
		}
	}
	for _, o := range spec.Overrides {
		e.patches = append(e.patches, o.Raw)
	}
	return e, nil
}

func wrap(key string, raw []byte) []byte {
	return []byte(`{"` + key + `":` + string(raw) + `}`)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Ref is the ClusterConfig.
func (e *Executor) Ref() step.Ref {
	return step.Ref{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind, Namespace: e.ns, Name: e.name}
}

// Targets is the ClusterConfig: the stage's backup holds it as it was.
func (e *Executor) Targets(context.Context) ([]step.Ref, error) { return []step.Ref{e.Ref()}, nil }

// Run writes the pause image, then the whole merged spec; each write at
// the resourceVersion it read.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var changed []string
	for i := 0; ; i++ {
		live, err := e.dyn.Resource(GVR).Namespace(e.ns).Get(ctx, e.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return step.Failure("ClusterConfig %s/%s does not exist: the cluster does not run k0s, or its config lives elsewhere (set namespace and name)", e.ns, e.name), nil
		}
		if err != nil {
			return step.Result{}, fmt.Errorf("read ClusterConfig %s/%s: %w", e.ns, e.name, err)
		}
		next, what, err := e.nextWrite(live)
		if err != nil {
			return step.Failure("ClusterConfig %s/%s: %v", e.ns, e.name, err), nil
		}
		if next != nil && len(changed) == 0 {
			// The whole merged spec is judged before the pause image is
			// written: a spec the server refuses changes nothing.
			if res, err := e.dryRun(ctx, live); err != nil || res != nil {
				return deref(res), err
			}
		}
		if next == nil {
			if len(changed) == 0 {
				return step.Success("ClusterConfig %s/%s is as the plan says already: nothing written", e.ns, e.name), nil
			}
			return step.Success("ClusterConfig %s/%s updated: %s", e.ns, e.name, strings.Join(changed, "; then ")), nil
		}
		_, err = e.dyn.Resource(GVR).Namespace(e.ns).Update(ctx, next, metav1.UpdateOptions{})
		switch {
		case apierrors.IsConflict(err) && i < conflictRetries:
			continue // k0s wrote in between: read and merge again
		case apierrors.IsInvalid(err):
			return step.Failure("ClusterConfig %s/%s refused the merged spec: %v", e.ns, e.name, err), nil
		case err != nil:
			return step.Result{}, fmt.Errorf("update ClusterConfig %s/%s: %w", e.ns, e.name, err)
		}
		changed = append(changed, what)
	}
}

// nextWrite is the object to write next and what it changes, or nil when
// live is as the plan says: first the pause image alone, if it differs.
func (e *Executor) nextWrite(live *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	spec, err := canonical(live.Object["spec"])
	if err != nil {
		return nil, "", err
	}
	if e.pauseOnly != nil {
		paused, err := merge(spec, e.pauseOnly)
		if err != nil {
			return nil, "", err
		}
		if !reflect.DeepEqual(paused, spec) {
			return withSpec(live, paused), "the pause image", nil
		}
	}
	want, err := merge(spec, e.patches...)
	if err != nil {
		return nil, "", err
	}
	if reflect.DeepEqual(want, spec) {
		return nil, "", nil
	}
	return withSpec(live, want), "spec." + strings.Join(diffKeys(spec, want), ", spec."), nil
}

// canonical is v as JSON decodes it (numbers float64), so a spec read
// from the API server and one merged here compare equal when they are.
func canonical(v any) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("spec is not an object: %w", err)
	}
	return out, nil
}

// merge applies patches to spec in order (RFC 7386).
func merge(spec map[string]any, patches ...[]byte) (map[string]any, error) {
	doc, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	for i, p := range patches {
		if doc, err = jsonpatch.MergePatch(doc, p); err != nil {
			return nil, fmt.Errorf("merge patch %d: %w", i, err)
		}
	}
	var out map[string]any
	if err := json.Unmarshal(doc, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func withSpec(live *unstructured.Unstructured, spec map[string]any) *unstructured.Unstructured {
	out := live.DeepCopy()
	out.Object["spec"] = spec
	return out
}

// diffKeys are the top-level keys of spec whose values differ.
func diffKeys(a, b map[string]any) []string {
	var keys []string
	for k, v := range b {
		if !reflect.DeepEqual(a[k], v) {
			keys = append(keys, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// dryRun asks the server to judge live with the whole merged spec: a
// refusal is the step's failure (a result), nothing written.
func (e *Executor) dryRun(ctx context.Context, live *unstructured.Unstructured) (*step.Result, error) {
	spec, err := canonical(live.Object["spec"])
	if err != nil {
		return nil, err
	}
	want, err := merge(spec, e.patches...)
	if err != nil {
		res := step.Failure("ClusterConfig %s/%s: %v", e.ns, e.name, err)
		return &res, nil
	}
	_, err = e.dyn.Resource(GVR).Namespace(e.ns).Update(ctx, withSpec(live, want), metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case apierrors.IsInvalid(err):
		res := step.Failure("ClusterConfig %s/%s refused the merged spec (nothing written): %v", e.ns, e.name, err)
		return &res, nil
	case err != nil && !apierrors.IsConflict(err):
		return nil, fmt.Errorf("dry-run the update of ClusterConfig %s/%s: %w", e.ns, e.name, err)
	}
	return nil, nil
}

func deref(r *step.Result) step.Result {
	if r == nil {
		return step.Result{}
	}
	return *r
}
