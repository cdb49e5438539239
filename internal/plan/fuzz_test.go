package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/fuzzcheck"
)

// maxFuzzPlan bounds a fuzzed plan: the parser's work grows with the
// document, and a few KiB reach every field.
const maxFuzzPlan = 16 << 10

// FuzzDecodeValidate feeds plan files to Decode, Validate and
// ValidateInCluster. A refused file is a *DecodeError whose every problem
// names a place ("field.path: ..."), or the decoder's own error; every
// validation error names its field; and a plan that decodes encodes to
// YAML that decodes again to the same plan.
func FuzzDecodeValidate(f *testing.F) {
	for _, glob := range []string{"testdata/*.yaml", "testdata/invalid/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	base := f.TempDir() // relative paths resolve here: an empty directory
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzPlan {
			return
		}
		defer fuzzcheck.Within("Decode and Validate", b)()
		l, err := Decode("fuzz.yaml", b, base)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		for _, errs := range []field.ErrorList{Validate(l), ValidateInCluster(l.Plan)} {
			for _, e := range errs {
				if e.Field == "" || !strings.HasPrefix(e.Error(), e.Field+": ") {
					t.Fatalf("a validation error without its field: %q", e)
				}
			}
		}
		again, err := yaml.Marshal(l.Plan)
		if err != nil {
			t.Fatalf("a decoded plan does not encode: %v", err)
		}
		l2, err := Decode("again.yaml", again, base)
		if err != nil {
			t.Fatalf("a decoded plan, encoded, does not decode again: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(l.Plan, l2.Plan) {
			t.Fatalf("decode, encode, decode changed the plan:\n%s", again)
		}
	})
}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("Decode refused with %T (%v), not a *DecodeError", err, err)
	}
	if len(de.Problems) == 0 && de.Err == nil {
		t.Fatalf("a DecodeError with neither problems nor the decoder's error")
	}
	for _, p := range de.Problems {
		if !strings.Contains(p, ": ") {
			t.Fatalf("a decode problem without its place: %q", p)
		}
	}
	if de.Error() == "" {
		t.Fatal("an empty decode error")
	}
}
