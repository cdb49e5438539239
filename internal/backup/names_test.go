package backup

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSecretName(t *testing.T) {
	long := strings.Repeat("very-long-run-name-", 20)
	keys := []Key{
		{Run: "demo-1", Stage: "crds", Attempt: 1},
		{Run: "demo-1", Stage: "crds", Attempt: 2},
		{Run: "a-b", Stage: "c", Attempt: 1},
		{Run: "a", Stage: "b-c", Attempt: 1},
		{Run: "Upgrade_To v2.0!", Stage: "Data Plane / Cilium", Attempt: 0},
		{Run: long, Stage: long, Attempt: 12},
		{Run: long, Stage: long + "x", Attempt: 12},
		{Run: "…", Stage: "…", Attempt: 1},
	}
	seen := map[string]Key{}
	for _, k := range keys {
		for _, i := range []int{0, 1, 123} {
			name := SecretName(k, i)
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("SecretName(%+v, %d) = %q: invalid: %v", k, i, name, errs)
			}
			if other, dup := seen[name]; dup {
				t.Errorf("SecretName(%+v, %d) = %q, same as for %+v", k, i, name, other)
			}
			seen[name] = k
			if again := SecretName(k, i); again != name {
				t.Errorf("SecretName not deterministic: %q then %q", name, again)
			}
		}
	}
	if got := SecretName(Key{Run: "demo-1", Stage: "crds", Attempt: 1}, 0); !strings.HasPrefix(got, "upshift-backup-demo-1-crds-1-") {
		t.Errorf("SecretName = %q, want the readable prefix upshift-backup-demo-1-crds-1-", got)
	}
}

func TestLabelValue(t *testing.T) {
	for _, s := range []string{"demo-1", "Data Plane / Cilium", strings.Repeat("x", 100), "-_.", "…", ""} {
		v := labelValue(s)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q: invalid: %v", s, v, errs)
		}
	}
	if labelValue("demo-1") != "demo-1" {
		t.Errorf("a valid value must be kept as is")
	}
	if labelValue(strings.Repeat("x", 70)) == labelValue(strings.Repeat("x", 71)) {
		t.Errorf("shortened values must stay distinct")
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		n, size int
		want    []int
	}{
		{0, 10, []int{0}},
		{5, 10, []int{5}},
		{10, 10, []int{10}},
		{11, 10, []int{10, 1}},
		{25, 10, []int{10, 10, 5}},
	}
	for _, tt := range tests {
		b := bytes.Repeat([]byte{'x'}, tt.n)
		chunks := split(b, tt.size)
		var got []int
		for _, c := range chunks {
			got = append(got, len(c))
		}
		if !equalInts(got, tt.want) || !bytes.Equal(bytes.Join(chunks, nil), b) {
			t.Errorf("split(%d bytes, %d) sizes = %v, want %v", tt.n, tt.size, got, tt.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
