package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// want is one problem a plan must be rejected for: the message starts with
// the field path and says how to fix it.
type want struct{ path, hint string }

// invalidCorpus is every file in testdata/invalid and what a user must be
// told about it.
var invalidCorpus = []struct {
	file  string
	wants []want
}{
	{file: "recreate-bad-fields.yaml", wants: []want{
		{"spec.stages[0].steps[0].recreate.apiVersion", "e.g. apps/v1"},
		{"spec.stages[0].steps[0].recreate.namespace", "where * stands for any characters (tenant-*)"},
		{"spec.stages[0].steps[0].recreate.selector", "app in (gw"},
		{"spec.stages[0].steps[0].recreate.mode", `"delete", "annotate"`},
	}},
	{file: "helm-bad-fields.yaml", wants: []want{
		{"spec.stages[0].steps[0].helm.release", "lowercase letters, digits and '-', at most 53 characters"},
		{"spec.stages[0].steps[0].helm.namespace", "the release's namespace"},
		{"spec.stages[0].steps[0].helm.version", "an oci:// chart needs its version"},
		{"spec.stages[0].steps[0].helm.values", "values must be a map of keys to values"},
		{"spec.stages[0].steps[0].helm.valuesFiles[0]", "paths are relative to the plan file"},
	}},
	{file: "unknown-field.yaml", wants: []want{{"spec.stages[0].steps[0].timout", `unknown field "timout": did you mean "timeout"?`}}},
	{file: "unknown-spec-field.yaml", wants: []want{{"spec.autoRollbak", `did you mean "autoRollback"?`}}},
	{file: "wrong-apiversion.yaml", wants: []want{{"apiVersion", "must be upshift.dev/v1alpha1"}}},
	{file: "wrong-kind.yaml", wants: []want{{"kind", "must be UpgradePlan"}}},
	{file: "missing-name.yaml", wants: []want{{"metadata.name", "a plan needs a name (lowercase letters"}}},
	{file: "bad-name.yaml", wants: []want{{"metadata.name", "lowercase letters, digits, '-' and '.'"}}},
	{file: "missing-version.yaml", wants: []want{{"spec.version", "the target version this plan reaches"}}},
	{file: "unquoted-version.yaml", wants: []want{{"spec.version", `1.10 is a YAML number: quote it ("1.10") so it stays a version`}}},
	{file: "no-stages.yaml", wants: []want{{"spec.stages", "at least one stage is required"}}},
	{file: "empty-stage-steps.yaml", wants: []want{{"spec.stages[1].steps", "at least one step is required"}}},
	{file: "duplicate-stage-names.yaml", wants: []want{{"spec.stages[1].name", `Duplicate value: "data-plane": give each stage its own name`}}},
	{file: "duplicate-step-names.yaml", wants: []want{{"spec.stages[1].steps[0].name", `(also spec.stages[0].steps[0])": give each step its own name`}}},
	{file: "dependson-cycle.yaml", wants: []want{{"spec.stages[0].steps", "ipam -> proxy -> ipam"}, {"spec.stages[0].steps", "dependsOn makes a cycle"}}},
	{file: "dependson-unknown.yaml", wants: []want{{"spec.stages[0].steps[0].dependsOn[0]", "fabirc: dependsOn names steps of the same stage"}}},
	{file: "step-no-kind.yaml", wants: []want{{"spec.stages[0].steps[0]", "set exactly one step kind: crds, manifests, image, helm, job, recreate, freeze, approval, pause, autopilot, distribute, clusterConfig, installation or helmUninstall"}}},
	{file: "step-two-kinds.yaml", wants: []want{{"spec.stages[0].steps[0]", "split this step in two"}}},
	{file: "crds-two-sources.yaml", wants: []want{{"spec.stages[0].steps[0].crds", "set exactly one of path, url, inline, configMap or secret"}}},
	{file: "missing-path.yaml", wants: []want{{"spec.stages[0].steps[0].crds.path", "paths are relative to the plan file"}}},
	{file: "bad-url-scheme.yaml", wants: []want{{"spec.stages[0].steps[0].crds.url", "must be an absolute http(s) URL"}}},
	{file: "cafile-without-url.yaml", wants: []want{{"spec.stages[0].steps[0].manifests.caFile", "apply to url only"}}},
	{file: "negative-mincount.yaml", wants: []want{{"spec.stages[0].steps[0].crds.minCount", "must not be negative"}}},
	{file: "mincount-string.yaml", wants: []want{{"spec.stages[0].steps[0].crds.minCount", `must be a whole number, not the string "3"`}}},
	{file: "image-bad-kind.yaml", wants: []want{{"spec.stages[0].steps[0].image.kind", `supported values: "Deployment", "DaemonSet", "StatefulSet"`}}},
	{file: "image-missing-namespace-name.yaml", wants: []want{
		{"spec.stages[0].steps[0].image.namespace", "the workload's namespace"},
		{"spec.stages[0].steps[0].image.name", "the workload's name"},
	}},
	{file: "image-no-images.yaml", wants: []want{{"spec.stages[1].steps[0].image.images", "at least one container is required (container name: image)"}}},
	{file: "image-empty-image.yaml", wants: []want{{"spec.stages[0].steps[0].image.images[manager]", "an image is required"}}},
	{file: "image-empty-container-name.yaml", wants: []want{{"spec.stages[0].steps[0].image.images", "empty container name: key each image by its container's name"}}},
	{file: "image-bad-reference.yaml", wants: []want{{"spec.stages[0].steps[0].image.images[proxy]", `"example.com/demo/proxy 1.1.0": not a valid image reference`}}},
	{file: "cafile-and-insecure.yaml", wants: []want{{"spec.stages[0].steps[0].crds", "set caFile or insecureSkipVerify, not both"}}},
	{file: "gate-no-kind.yaml", wants: []want{{"spec.stages[0].gates[0]", "set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric"}}},
	{file: "gate-two-kinds.yaml", wants: []want{{"spec.stages[0].gates[0]", "set exactly one gate kind: ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak or metric"}}},
	{file: "envkept-gate-other-stage.yaml", wants: []want{{"spec.stages[1].gates[0].envKept",
		`"deployment demo-system/demo-controller-manager": no step of stage "data-plane" changes it, so the stage's backup does not hold it: put the envKept gate in the stage that changes the workload`}}},
	{file: "ready-gate-name-and-selector.yaml", wants: []want{{"spec.stages[0].gates[0].ready", "set exactly one of name or selector"}}},
	// The parser's message says what is wrong; ours adds what a selector looks like.
	{file: "ready-gate-bad-selector.yaml", wants: []want{
		{"spec.stages[0].gates[0].ready.selector", "unable to parse requirement"},
		{"spec.stages[0].gates[0].ready.selector", "e.g. app=web,tier!=db"},
	}},
	{file: "ready-gate-no-apiversion.yaml", wants: []want{{"spec.stages[0].gates[0].ready.apiVersion", "e.g. apps/v1"}}},
	{file: "http-gate-bad-url.yaml", wants: []want{{"spec.stages[0].gates[0].http.url", "must be an absolute http(s) URL"}}},
	{file: "http-gate-bad-status.yaml", wants: []want{{"spec.stages[0].gates[0].http.expectStatus", "must be an HTTP status code (100-599)"}}},
	{file: "http-gate-status-too-low.yaml", wants: []want{{"spec.stages[0].gates[0].http.expectStatus", "Invalid value: 99: must be an HTTP status code (100-599)"}}},
	{file: "http-gate-nonpositive-durations.yaml", wants: []want{
		{"spec.stages[0].gates[0].http.timeout", `Invalid value: "-30s": must be a positive duration`},
		{"spec.stages[0].gates[0].http.interval", `Invalid value: "0s": must be a positive duration`},
	}},
	{file: "http-gate-interval-over-timeout.yaml", wants: []want{{"spec.stages[0].gates[0].http.interval",
		`Invalid value: "1m0s": must not exceed the gate's timeout (30s, spec.stages[0].gates[0].timeout): the gate would make one request and fail`}}},
	{file: "bad-duration.yaml", wants: []want{{"spec.stages[0].steps[1].timeout", `invalid duration "5 minutes": use a Go duration such as 30s, 5m or 1h30m`}}},
	{file: "bad-gate-durations.yaml", wants: []want{
		{"spec.stages[0].gates[0].timeout", "invalid duration 90: use a Go duration"},
		{"spec.stages[0].gates[1].http.interval", `invalid duration "one second": use a Go duration`},
	}},
	{file: "negative-timeout.yaml", wants: []want{{"spec.stages[0].steps[0].timeout", "must be a positive duration such as 30s or 5m"}}},
	{file: "zero-gate-timeout.yaml", wants: []want{{"spec.stages[0].gates[0].timeout", "must be a positive duration such as 30s or 5m"}}},
}

// Every invalid plan is rejected, by Load or by Validate, with one message
// per mistake that starts with the field path and says how to fix it.
func TestInvalidCorpus(t *testing.T) {
	for _, tc := range invalidCorpus {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			msgs := problemsOf(t, filepath.Join("testdata", "invalid", tc.file))
			if len(msgs) == 0 {
				t.Fatal("accepted, want it rejected")
			}
			for _, w := range tc.wants {
				if !hasProblem(msgs, w) {
					t.Errorf("no message starting %q and containing %q in:\n  %s", w.path+":", w.hint, strings.Join(msgs, "\n  "))
				}
			}
		})
	}
}

// The table and the directory agree: no file is left untested.
func TestInvalidCorpusCoversEveryFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, tc := range invalidCorpus {
		inTable[tc.file] = true
		if _, err := os.Stat(filepath.Join("testdata", "invalid", tc.file)); err != nil {
			t.Errorf("table names %s: %v", tc.file, err)
		}
	}
	for _, f := range files {
		if !inTable[filepath.Base(f)] {
			t.Errorf("%s has no row in invalidCorpus", f)
		}
	}
}

// problemsOf loads and validates a plan and returns its problems, one
// message each: the decode problems when it does not load, else the
// validation errors.
func problemsOf(t *testing.T, path string) []string {
	t.Helper()
	l, err := Load(path)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("Load: %v, want a *DecodeError", err)
		}
		if !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("Load error %q does not start with the file name", err)
		}
		if len(de.Problems) == 0 {
			return []string{err.Error()}
		}
		return de.Problems
	}
	var msgs []string
	for _, e := range Validate(l) {
		msgs = append(msgs, e.Error())
	}
	return msgs
}

func hasProblem(msgs []string, w want) bool {
	for _, m := range msgs {
		if strings.HasPrefix(m, w.path+": ") && strings.Contains(m, w.hint) {
			return true
		}
	}
	return false
}

// What Load says when strict decoding fails, for the cases a file corpus
// cannot show by path alone.
func TestExplainDecode(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // exact problems, in order
	}{
		{"broken YAML: the decoder's own error is kept", "spec: [", nil},
		{"keys match ignoring case, as encoding/json does", "spec: {Version: 1.0.0, stages: [{name: a, stepz: []}]}",
			[]string{`spec.stages[0].stepz: unknown field "stepz": did you mean "steps"? the fields here are name, steps, gates`}},
		{"a far-off name gets the list only", "spec: {stages: [{name: a, gates: [{readiness: {}}]}]}",
			[]string{`spec.stages[0].gates[0].readiness: unknown field "readiness": the fields here are timeout, severity, ready, http, podsRunning, pvcsBound, nodesReady, helmReleases, envKept, soak, metric`}},
		{"metadata is checked too; its field list is too long to print", "metadata: {nmae: x}",
			[]string{`metadata.nmae: unknown field "nmae": did you mean "name"? check the field name against the UpgradePlan schema`}},
		{"a bool as a string", "spec: {autoRollback: \"no\"}", []string{`spec.autoRollback: must be true or false, not the string "no"`}},
		{"a list where a mapping goes", "spec: []", []string{"spec: must be a mapping of fields (name: value), not a list"}},
		{"a mapping where a list goes", "spec: {stages: {name: a}}", []string{"spec.stages: must be a list, not a mapping"}},
		{"a valid duration and null say nothing", "spec: {stages: [{name: a, steps: [{name: b, timeout: 1h30m}], gates: [{timeout: null}]}]}", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := explainDecode([]byte(tc.yaml), reflect.TypeOf(&v1alpha1.UpgradePlan{}), v1alpha1.PlanKind)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("explainDecode(%q) =\n  %s\nwant\n  %s", tc.yaml, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// Broken YAML keeps the decoder's message, which says where, with the
// file name and a hint.
func TestLoadKeepsTheDecoderErrorWhenItCannotPlaceIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte("spec:\n  stages: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var de *DecodeError
	if !errors.As(err, &de) || len(de.Problems) != 0 || de.Err == nil {
		t.Fatalf("Load = %v, want a DecodeError with the decoder's error only", err)
	}
	for _, want := range []string{path + ": ", "line 2", "check the field names"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %q", err, want)
		}
	}
}
