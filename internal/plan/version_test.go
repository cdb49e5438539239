package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A version YAML reads as a number or a boolean is named as written, with
// the quoting that keeps it; anything YAML reads as a string passes.
func TestVersionProblem(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"spec: {version: 1.10}", `spec.version: 1.10 is a YAML number: quote it ("1.10") so it stays a version`},
		{"spec:\n  version: 1.20 # the next minor\n", `spec.version: 1.20 is a YAML number: quote it ("1.20") so it stays a version`},
		{"spec: {version: 2}", `spec.version: 2 is a YAML number: quote it ("2") so it stays a version`},
		{"spec: {version: 1e3}", `spec.version: 1e3 is a YAML number: quote it ("1e3") so it stays a version`},
		{"spec: {version: 010}", `spec.version: 010 is a YAML number: quote it ("010") so it stays a version`},
		// The decoder reads YAML 1.1, where yes is true.
		{"spec: {version: yes}", `spec.version: yes is a YAML boolean: quote it ("yes") so it stays a version`},
		// Keys match ignoring case, as the decoder matches them.
		{"spec: {Version: 1.10}", `spec.version: 1.10 is a YAML number: quote it ("1.10") so it stays a version`},
		{"v: &v 1.10\nspec: {version: *v}", `spec.version: 1.10 is a YAML number: quote it ("1.10") so it stays a version`},
		{`spec: {version: "1.10"}`, ""},
		{"spec: {version: '1.10'}", ""},
		{"spec: {version: 1.10.0}", ""},
		{"spec: {version: v1.10}", ""},
		{"spec: {version: }", ""},       // missing: Validate says it is required
		{"spec: {version: [1.10]}", ""}, // strict decoding rejects a list itself
		{"version: 1.10", ""},           // not spec.version
		{"spec: {version: 1.10", ""},    // broken YAML: the decoder says where
		{"spec: {stages: [{version: 1}]}", ""},
	} {
		if got := versionProblem([]byte(tc.yaml)); got != tc.want {
			t.Errorf("versionProblem(%q) =\n  %q\nwant\n  %q", tc.yaml, got, tc.want)
		}
	}
}

const planHead = "apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: demo}\n"

func writePlan(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(planHead+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Load refuses an unquoted version rather than run a plan for "1.1".
func TestLoadRejectsAnUnquotedVersion(t *testing.T) {
	path := writePlan(t, "spec:\n  version: 1.10\n  stages: [{name: a, steps: [{name: s, manifests: {inline: x}}]}]\n")
	l, err := Load(path)
	if err == nil {
		t.Fatalf("loaded with version %q, want an error", l.Plan.Spec.Version)
	}
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrVersionNotString) {
		t.Fatalf("Load = %v, want a *DecodeError wrapping ErrVersionNotString", err)
	}
	if want := path + `: spec.version: 1.10 is a YAML number: quote it ("1.10") so it stays a version`; err.Error() != want {
		t.Errorf("Load error\n  %s\nwant\n  %s", err, want)
	}

	path = writePlan(t, "spec:\n  version: \"1.10\"\n  stages: [{name: a, steps: [{name: s, manifests: {inline: x}}]}]\n")
	l, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Plan.Spec.Version != "1.10" {
		t.Errorf("version = %q, want 1.10", l.Plan.Spec.Version)
	}
}

// An unquoted version is reported with the other decoding mistakes, and
// does not hide a mistake only the decoder can name.
func TestLoadReportsAnUnquotedVersionWithOtherMistakes(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       [][]string // each problem's substrings, in order
	}{
		{"with an unknown field", "spec: {version: 1.10, stages: [{name: a, stepz: []}]}",
			[][]string{{`spec.version: 1.10 is a YAML number`}, {`spec.stages[0].stepz: unknown field "stepz"`}}},
		{"with a mistake only the decoder names", "spec: {version: 1.10, stages: [{name: [a]}]}",
			[][]string{{`spec.version: 1.10 is a YAML number`}, {"cannot unmarshal array", "check the field names and value types"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writePlan(t, tc.body))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Load = %v, want a *DecodeError", err)
			}
			if errors.Is(err, ErrVersionNotString) {
				t.Errorf("Err is ErrVersionNotString, want the decoder's error: %v", de.Err)
			}
			if len(de.Problems) != len(tc.want) {
				t.Fatalf("problems:\n  %s\nwant %d", strings.Join(de.Problems, "\n  "), len(tc.want))
			}
			for i, ws := range tc.want {
				for _, w := range ws {
					if !strings.Contains(de.Problems[i], w) {
						t.Errorf("problem %d = %q, want %q in it", i, de.Problems[i], w)
					}
				}
			}
		})
	}
}
