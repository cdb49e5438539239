package backup

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A backup is whole when its chunks are every index of one count, of one
// snapshot: one missing (a Save cut short) or of another snapshot (an
// earlier Save of the key) is not.
func TestWholeBackup(t *testing.T) {
	chunk := func(name string, index int, of, sha string) chunkMeta {
		return chunkMeta{name: name, index: index, meta: metav1.ObjectMeta{Annotations: map[string]string{
			AnnotationChunk: strconv.Itoa(index) + "/" + of, AnnotationSnapshotSHA256: sha, AnnotationObjects: "3"}}}
	}
	for _, tc := range []struct {
		name   string
		chunks []chunkMeta
		want   []string
	}{
		{"none", nil, nil},
		{"one of one", []chunkMeta{chunk("a", 0, "1", "s")}, []string{"a"}},
		{"two, listed out of order", []chunkMeta{chunk("b", 1, "2", "s"), chunk("a", 0, "2", "s")}, []string{"a", "b"}},
		{"one of two", []chunkMeta{chunk("a", 0, "2", "s")}, nil},
		{"the second of two only", []chunkMeta{chunk("b", 1, "2", "s")}, nil},
		{"two snapshots", []chunkMeta{chunk("a", 0, "2", "s"), chunk("b", 1, "2", "t")}, nil},
		{"an index twice", []chunkMeta{chunk("a", 0, "2", "s"), chunk("a2", 0, "2", "s")}, nil},
	} {
		ref, whole := wholeBackup(tc.chunks)
		if whole != (tc.want != nil) {
			t.Errorf("%s: whole %t, want %t", tc.name, whole, tc.want != nil)
			continue
		}
		if whole && (len(ref.Secrets) != len(tc.want) || ref.Secrets[0] != tc.want[0] || ref.Objects != 3 || ref.SHA256 != "s") {
			t.Errorf("%s: ref %+v, want secrets %v", tc.name, ref, tc.want)
		}
	}
}
