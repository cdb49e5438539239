package image

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

// container is one container of a pod template.
type container struct{ name, image string }

// template is what the step reads of a workload's pod template.
type template struct {
	containers, initContainers []container
}

func templateOf(w *unstructured.Unstructured) (template, error) {
	var t template
	var err error
	if t.containers, err = containersAt(w, "containers"); err != nil {
		return t, err
	}
	t.initContainers, err = containersAt(w, "initContainers")
	return t, err
}

func containersAt(w *unstructured.Unstructured, field string) ([]container, error) {
	list, _, err := unstructured.NestedSlice(w.Object, "spec", "template", "spec", field)
	if err != nil {
		return nil, fmt.Errorf("spec.template.spec.%s: %w", field, err)
	}
	out := make([]container, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		name, _ := m["name"].(string)
		image, _ := m["image"].(string)
		out = append(out, container{name: name, image: image})
	}
	return out, nil
}

// missing lists, sorted, the containers of images the template lacks.
func (t template) missing(images map[string]string) []string {
	have := map[string]bool{}
	for _, c := range append(append([]container(nil), t.containers...), t.initContainers...) {
		have[c.name] = true
	}
	var out []string
	for name := range images {
		if !have[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// describe names the template's containers: "containers web, sidecar and
// init container setup".
func (t template) describe() string {
	names := func(cs []container) string {
		n := make([]string, len(cs))
		for i, c := range cs {
			n[i] = c.name
		}
		return strings.Join(n, ", ")
	}
	s := plural(len(t.containers), "container") + " " + names(t.containers)
	if len(t.initContainers) > 0 {
		s += " and " + plural(len(t.initContainers), "init container") + " " + names(t.initContainers)
	}
	return s
}

// imagePatch is the apply configuration of the step: the workload's
// identity and, per container, only its name and image. Containers of the
// step get their new image; containers whose image the manager set in an
// earlier step keep theirs (owned), so the apply does not remove it.
func imagePatch(ref step.Ref, t template, images map[string]string, owned ownership) *unstructured.Unstructured {
	entries := func(cs []container, owned map[string]bool) []any {
		var out []any
		for _, c := range cs {
			if img, ok := images[c.name]; ok {
				out = append(out, map[string]any{"name": c.name, "image": img})
			} else if owned[c.name] {
				out = append(out, map[string]any{"name": c.name, "image": c.image})
			}
		}
		return out
	}
	podSpec := map[string]any{}
	if cs := entries(t.containers, owned.containers); len(cs) > 0 {
		podSpec["containers"] = cs
	}
	if cs := entries(t.initContainers, owned.initContainers); len(cs) > 0 {
		podSpec["initContainers"] = cs
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ref.APIVersion,
		"kind":       ref.Kind,
		"metadata":   map[string]any{"name": ref.Name, "namespace": ref.Namespace},
		"spec":       map[string]any{"template": map[string]any{"spec": podSpec}},
	}}
}

// ownership is which containers' image a field manager holds.
type ownership struct {
	containers, initContainers map[string]bool
}

// ownedImages reads the workload's managedFields: the containers whose
// image manager set with an apply.
func ownedImages(w *unstructured.Unstructured, manager string) ownership {
	o := ownership{containers: map[string]bool{}, initContainers: map[string]bool{}}
	for _, mf := range w.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			continue // unreadable: the apply may then drop an image, and the server's validation says so
		}
		podSpec := dig(fields, "f:spec", "f:template", "f:spec")
		collectImages(dig(podSpec, "f:containers"), o.containers)
		collectImages(dig(podSpec, "f:initContainers"), o.initContainers)
	}
	return o
}

// collectImages adds the names of list entries `k:{"name":"web"}` that hold
// an f:image.
func collectImages(list map[string]any, into map[string]bool) {
	for key, v := range list {
		raw, ok := strings.CutPrefix(key, "k:")
		if !ok {
			continue
		}
		var k struct {
			Name string `json:"name"`
		}
		entry, _ := v.(map[string]any)
		if json.Unmarshal([]byte(raw), &k) == nil && k.Name != "" && entry["f:image"] != nil {
			into[k.Name] = true
		}
	}
}

func dig(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
