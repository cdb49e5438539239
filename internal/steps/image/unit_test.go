package image

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestNormalizeImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                            "docker.io/library/nginx:latest",
		"nginx:1.27":                       "docker.io/library/nginx:1.27",
		"docker.io/library/nginx:1.27":     "docker.io/library/nginx:1.27",
		"index.docker.io/library/nginx":    "docker.io/library/nginx:latest",
		"bitnami/redis:7":                  "docker.io/bitnami/redis:7",
		"registry.example/app:v2":          "registry.example/app:v2",
		"registry.example:5000/team/app":   "registry.example:5000/team/app:latest",
		"localhost/app:dev":                "localhost/app:dev",
		"ghcr.io/org/app@sha256:abc":       "ghcr.io/org/app@sha256:abc",
		"ghcr.io/org/app:v1@sha256:abc":    "ghcr.io/org/app:v1@sha256:abc",
		"registry.example:5000/app":        "registry.example:5000/app:latest",
		"registry.example:5000/app:1.0-rc": "registry.example:5000/app:1.0-rc",
	} {
		if got := normalizeImage(in); got != want {
			t.Errorf("normalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunsImage(t *testing.T) {
	tests := []struct {
		name string
		cs   corev1.ContainerStatus
		want string
		ok   bool
	}{
		{"same", corev1.ContainerStatus{Image: "registry.example/app:v2"}, "registry.example/app:v2", true},
		{"runtime normalized", corev1.ContainerStatus{Image: "docker.io/library/nginx:1.27"}, "nginx:1.27", true},
		{"other tag", corev1.ContainerStatus{Image: "registry.example/app:v1"}, "registry.example/app:v2", false},
		{"digest found in imageID", corev1.ContainerStatus{Image: "ghcr.io/org/app:v1", ImageID: "ghcr.io/org/app@sha256:abc"}, "ghcr.io/org/app@sha256:abc", true},
		{"other digest", corev1.ContainerStatus{Image: "ghcr.io/org/app:v1", ImageID: "ghcr.io/org/app@sha256:def"}, "ghcr.io/org/app@sha256:abc", false},
	}
	for _, tt := range tests {
		if got := runsImage(tt.cs, tt.want); got != tt.ok {
			t.Errorf("%s: runsImage = %t, want %t", tt.name, got, tt.ok)
		}
	}
}

func workload(t *testing.T, managed ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "setup", "image": "setup:v1"}},
			"containers": []any{
				map[string]any{"name": "web", "image": "web:v1", "env": []any{map[string]any{"name": "A", "value": "1"}}},
				map[string]any{"name": "sidecar", "image": "sidecar:v1"},
			},
		}}},
	}}
	w.SetManagedFields(managed)
	return w
}

func managedBy(t *testing.T, manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	t.Helper()
	if !json.Valid([]byte(fields)) {
		t.Fatalf("invalid fields JSON: %s", fields)
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestImagePatch(t *testing.T) {
	ref := step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web"}
	sidecarOwned := `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	sidecarByOther := `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{"f:image":{}}}}}}}`
	tests := []struct {
		name      string
		w         *unstructured.Unstructured
		images    map[string]string
		wantCtrs  []any
		wantInits []any
	}{
		{
			name:     "only the step's container, only name and image",
			w:        workload(t),
			images:   map[string]string{"web": "web:v2"},
			wantCtrs: []any{map[string]any{"name": "web", "image": "web:v2"}},
		},
		{
			name:      "init container",
			w:         workload(t),
			images:    map[string]string{"setup": "setup:v2"},
			wantInits: []any{map[string]any{"name": "setup", "image": "setup:v2"}},
		},
		{
			name:   "an image this manager set before is repeated unchanged",
			w:      workload(t, managedBy(t, FieldManager, metav1.ManagedFieldsOperationApply, sidecarOwned)),
			images: map[string]string{"web": "web:v2"},
			wantCtrs: []any{
				map[string]any{"name": "web", "image": "web:v2"},
				map[string]any{"name": "sidecar", "image": "sidecar:v1"},
			},
		},
		{
			name: "images of other managers are left out",
			w: workload(t,
				managedBy(t, "kubectl-edit", metav1.ManagedFieldsOperationUpdate, sidecarByOther),
				managedBy(t, "upshift", metav1.ManagedFieldsOperationApply, sidecarByOther)),
			images:   map[string]string{"web": "web:v2"},
			wantCtrs: []any{map[string]any{"name": "web", "image": "web:v2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := templateOf(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			p := imagePatch(ref, tmpl, tt.images, ownedImages(tt.w, FieldManager))
			ctrs, _, _ := unstructured.NestedSlice(p.Object, "spec", "template", "spec", "containers")
			inits, _, _ := unstructured.NestedSlice(p.Object, "spec", "template", "spec", "initContainers")
			if !reflect.DeepEqual(ctrs, tt.wantCtrs) || !reflect.DeepEqual(inits, tt.wantInits) {
				t.Errorf("patch containers = %v, initContainers = %v; want %v, %v", ctrs, inits, tt.wantCtrs, tt.wantInits)
			}
			if len(p.Object) != 4 || p.GetName() != "web" || p.GetNamespace() != "demo" || p.GetKind() != "Deployment" {
				t.Errorf("patch = %v, want apiVersion, kind, metadata and spec only", p.Object)
			}
		})
	}
}

func TestMissingContainers(t *testing.T) {
	tmpl, err := templateOf(workload(t))
	if err != nil {
		t.Fatal(err)
	}
	got := tmpl.missing(map[string]string{"web": "x", "setup": "y", "zeta": "z", "alpha": "a"})
	if !reflect.DeepEqual(got, []string{"alpha", "zeta"}) {
		t.Errorf("missing = %v", got)
	}
	if d := tmpl.describe(); d != "containers web, sidecar and init container setup" {
		t.Errorf("describe = %q", d)
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, tt := range []struct {
		spec v1alpha1.ImageStep
		want string
	}{
		{v1alpha1.ImageStep{Kind: "Pod", Namespace: "demo", Name: "web", Images: map[string]string{"web": "x"}}, `kind "Pod"`},
		{v1alpha1.ImageStep{Kind: "Deployment", Name: "web", Images: map[string]string{"web": "x"}}, "namespace and name are required"},
		{v1alpha1.ImageStep{Kind: "Deployment", Namespace: "demo", Name: "web"}, "images is empty"},
		{v1alpha1.ImageStep{Kind: "StatefulSet", Namespace: "demo", Name: "db", Images: map[string]string{"db": ""}}, `container "db"`},
	} {
		_, err := New(tt.spec, time.Minute, nil, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.spec, err, tt.want)
		}
	}
}
