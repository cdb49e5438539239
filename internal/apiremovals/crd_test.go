package apiremovals

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crd builds a widgets.example.com CRD: versions as "name" (served),
// "name*" (served, storage), "name-" (not served), "name-*" (storage, not
// served), and storedVersions.
func crd(vs []string, stored ...string) *unstructured.Unstructured {
	var list []any
	for _, v := range vs {
		name, storage := strings.CutSuffix(v, "*")
		name, notServed := strings.CutSuffix(name, "-")
		served := !notServed
		list = append(list, map[string]any{"name": name, "served": served, "storage": storage})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "kind": "Widget"}, "versions": list},
	}}
	if stored != nil {
		s := make([]any, len(stored))
		for i, v := range stored {
			s[i] = v
		}
		u.Object["status"] = map[string]any{"storedVersions": s}
	}
	return u
}

func TestDroppedStoredVersions(t *testing.T) {
	for _, tt := range []struct {
		name       string
		live, next *unstructured.Unstructured
		want       []string // dropped versions
		remaining  []string
	}{
		{"a stored version dropped after storage moved on",
			crd([]string{"v1alpha1", "v1*"}, "v1alpha1", "v1"), crd([]string{"v1*"}), []string{"v1alpha1"}, []string{"v1"}},
		{"migrated: storedVersions lists only what stays",
			crd([]string{"v1alpha1", "v1*"}, "v1"), crd([]string{"v1*"}), nil, nil},
		{"the storage version changes, the old one stays listed",
			crd([]string{"v1alpha1*"}, "v1alpha1"), crd([]string{"v1alpha1", "v1*"}), nil, nil},
		{"the old version stays, no longer served",
			crd([]string{"v1alpha1", "v1*"}, "v1alpha1", "v1"), crd([]string{"v1alpha1-", "v1*"}), nil, nil},
		{"the live storage version itself dropped",
			crd([]string{"v1alpha1*"}, "v1alpha1"), crd([]string{"v1*"}), []string{"v1alpha1"}, []string{"v1"}},
		{"two stored versions dropped",
			crd([]string{"v1alpha1", "v1beta1", "v1*"}, "v1alpha1", "v1beta1", "v1"), crd([]string{"v1*"}), []string{"v1alpha1", "v1beta1"}, []string{"v1"}},
		{"a live CRD with no status yet (just created)",
			crd([]string{"v1alpha1*"}), crd([]string{"v1*"}), nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			drops := DroppedStoredVersions(tt.live, tt.next)
			var got []string
			for _, d := range drops {
				got = append(got, d.Version)
				if !reflect.DeepEqual(d.Remaining, tt.remaining) {
					t.Errorf("%s: Remaining = %v, want %v", d.Version, d.Remaining, tt.remaining)
				}
				if d.CRD != "widgets.example.com" || d.Resource != "widgets.example.com" || d.Objects != -1 {
					t.Errorf("%s: got %+v, want the CRD named, its resource and Objects -1 (not counted)", d.Version, d)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("dropped %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStoredVersionDropSaysTheFix(t *testing.T) {
	base := StoredVersionDrop{CRD: "widgets.example.com", Resource: "widgets.example.com", Version: "v1alpha1",
		LiveStorage: "v1", NextStorage: "v1", Remaining: []string{"v1"}}
	patch := `kubectl patch crd widgets.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'`
	with := func(f func(*StoredVersionDrop)) StoredVersionDrop { d := base; f(&d); return d }
	for _, tt := range []struct {
		name    string
		d       StoredVersionDrop
		want    []string
		notWant []string
	}{
		{"objects to migrate", with(func(d *StoredVersionDrop) { d.Objects = 3 }),
			[]string{"widgets.example.com lists v1alpha1", "3 widgets.example.com exist", "migrate the stored objects to v1",
				"kube-storage-version-migrator", "`kubectl get widgets.example.com -A -o json | kubectl replace -f -`",
				"then remove v1alpha1 from the CRD's status.storedVersions", patch, "or keep v1alpha1 in spec.versions with served: false"}, nil},
		{"one object", with(func(d *StoredVersionDrop) { d.Objects = 1 }), []string{"1 widgets.example.com exists"}, nil},
		{"no objects: nothing to rewrite", with(func(d *StoredVersionDrop) { d.Objects = 0 }),
			[]string{"no widgets.example.com exist, so nothing needs rewriting", "remove v1alpha1 from the CRD's status.storedVersions", patch},
			[]string{"migrate"}},
		{"not counted", with(func(d *StoredVersionDrop) { d.Objects, d.CountErr = -1, errors.New("may not list widgets") }),
			[]string{"could not count its objects: may not list widgets", "migrate the stored objects to v1"}, nil},
		{"the storage version dropped: a CRD storing the new one first",
			with(func(d *StoredVersionDrop) { d.LiveStorage, d.Objects = "v1alpha1", 0 }),
			[]string{"v1alpha1 is the storage version now", "first apply the CRD with v1 as the storage version and v1alpha1 still in spec.versions", "migrate the stored objects to v1", patch}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.d.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("message has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestStorageAndServedVersion(t *testing.T) {
	for _, tt := range []struct {
		vs              []string
		storage, served string
	}{
		{[]string{"v1alpha1", "v1*"}, "v1", "v1"},
		{[]string{"v1alpha1", "v1-*"}, "v1", "v1alpha1"}, // storage, not served: read another
		{[]string{"v1alpha1-", "v1beta1", "v1*"}, "v1", "v1"},
		{[]string{"v1alpha1-"}, "", ""},
	} {
		c := crd(tt.vs)
		if got := StorageVersion(c); got != tt.storage {
			t.Errorf("StorageVersion(%v) = %q, want %q", tt.vs, got, tt.storage)
		}
		if got := ServedVersion(c); got != tt.served {
			t.Errorf("ServedVersion(%v) = %q, want %q", tt.vs, got, tt.served)
		}
	}
}
