package backup

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

// Held finds an entry by group, kind, namespace and name, whatever the
// version, and tells an object absent before the stage from one the
// snapshot does not name.
func TestHeld(t *testing.T) {
	web := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment"}}
	s := &Snapshot{Entries: []Entry{
		{Ref: step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Object: web},
		{Ref: step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "new"}},
	}}
	for _, tc := range []struct {
		ref      step.Ref
		obj      *unstructured.Unstructured
		wantHeld bool
	}{
		{step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, web, true},
		{step.Ref{APIVersion: "apps/v1beta2", Kind: "Deployment", Namespace: "shop", Name: "web"}, web, true},
		{step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "new"}, nil, true},
		{step.Ref{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "shop", Name: "web"}, nil, false},
		{step.Ref{APIVersion: "extensions/v1beta1", Kind: "Deployment", Namespace: "shop", Name: "web"}, nil, false},
		{step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "other", Name: "web"}, nil, false},
	} {
		obj, held := s.Held(tc.ref)
		if obj != tc.obj || held != tc.wantHeld {
			t.Errorf("Held(%s %s) = %v, %v; want %v, %v", tc.ref.APIVersion, tc.ref, obj, held, tc.obj, tc.wantHeld)
		}
	}
}
