package backup

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/step"
)

// A snapshot is unmoved in a cache only when the cache knows every object
// it holds and shows each at the same UID and version, or still absent.
func TestUnmovedInACache(t *testing.T) {
	t.Parallel()
	web := step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "app", Name: "web"}
	gone := step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "app", Name: "new"}
	obj := &unstructured.Unstructured{}
	obj.SetUID("u1")
	obj.SetResourceVersion("10")
	unversioned := obj.DeepCopy()
	unversioned.SetResourceVersion("")
	snap := &Snapshot{Entries: []Entry{{Ref: web, Object: obj}, {Ref: gone}}}

	at := func(uid types.UID, rv string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{UID: uid, ResourceVersion: rv}
	}
	for _, tt := range []struct {
		name  string
		snap  *Snapshot
		cache map[step.Ref]*metav1.ObjectMeta // absent key: unknown; nil value: known absent
		want  bool
	}{
		{"both as held", snap, map[step.Ref]*metav1.ObjectMeta{web: at("u1", "10"), gone: nil}, true},
		{"a newer version", snap, map[step.Ref]*metav1.ObjectMeta{web: at("u1", "11"), gone: nil}, false},
		{"re-created under another UID", snap, map[step.Ref]*metav1.ObjectMeta{web: at("u2", "10"), gone: nil}, false},
		{"deleted since", snap, map[step.Ref]*metav1.ObjectMeta{web: nil, gone: nil}, false},
		{"created since", snap, map[step.Ref]*metav1.ObjectMeta{web: at("u1", "10"), gone: at("u3", "12")}, false},
		{"one the cache cannot tell", snap, map[step.Ref]*metav1.ObjectMeta{web: at("u1", "10")}, false},
		{"held without a version", &Snapshot{Entries: []Entry{{Ref: web, Object: unversioned}}}, map[step.Ref]*metav1.ObjectMeta{web: at("u1", "")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(ref step.Ref) (*metav1.ObjectMeta, bool) {
				m, known := tt.cache[ref]
				return m, known
			}
			if got := tt.snap.unmovedIn(lookup); got != tt.want {
				t.Errorf("unmovedIn = %v, want %v", got, tt.want)
			}
		})
	}
}
