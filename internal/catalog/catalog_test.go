package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/versions"
)

func openDir(t *testing.T, dir string) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), Ref{Path: dir}, Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return c
}

func TestOpenADirectoryAndSolveItsPath(t *testing.T) {
	c := openDir(t, "testdata/hops")
	path, err := c.Path(versions.Request{Current: semver.MustParse("1.0.0"), Target: semver.MustParse("1.3.0")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range path {
		got = append(got, r.Version.String())
	}
	if strings.Join(got, " ") != "1.1.1 1.2.0 1.3.0" {
		t.Fatalf("path = %v, want 1.1.1 1.2.0 1.3.0 (the required stop kept, patches skipped)", got)
	}
	var passed []string
	for _, v := range c.Passed(semver.MustParse("1.0.0"), path) {
		passed = append(passed, v.String())
	}
	if strings.Join(passed, " ") != "1.0.1 1.1.0" {
		t.Errorf("Passed = %v, want 1.0.1 1.1.0", passed)
	}
}

// TestInstallsKubernetesReachesTheSolver: a release's installsKubernetes
// is the version the path solver checks the stops after it against.
func TestInstallsKubernetesReachesTheSolver(t *testing.T) {
	c := &ReleaseCatalog{Spec: Spec{Releases: []Release{
		{Version: "1.0.0"}, {Version: "1.1.0", InstallsKubernetes: "1.32"}, {Version: "1.2.0", Kubernetes: ">= 1.32"},
	}}}
	rels, err := c.Releases()
	if err != nil {
		t.Fatal(err)
	}
	if k := rels[1].InstallsKubernetes; k == nil || k.String() != "1.32.0" || rels[0].InstallsKubernetes != nil {
		t.Fatalf("Releases()[1].InstallsKubernetes = %v, want 1.32.0 (and none for 1.0.0)", k)
	}
	path, err := versions.Path(rels, versions.Request{Current: semver.MustParse("1.0.0"), Target: semver.MustParse("1.2.0"), Kubernetes: semver.MustParse("1.31.4")})
	if err != nil || len(path) != 2 {
		t.Fatalf("Path = %v, %v; want 1.1.0 then 1.2.0, checked against the Kubernetes 1.1.0 installs", path, err)
	}
}

func TestPlanTemplateIsFilledWithTheHop(t *testing.T) {
	c := openDir(t, "testdata/hops")
	l, err := c.PlanFor(context.Background(), semver.MustParse("1.2.0"), semver.MustParse("1.1.1"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Plan.Name != "hops-1.2.0" || l.Plan.Spec.Version != "1.2.0" {
		t.Errorf("plan %s version %s, want hops-1.2.0 at 1.2.0", l.Plan.Name, l.Plan.Spec.Version)
	}
	inline := l.Plan.Spec.Stages[0].Steps[0].Manifests.Inline
	for _, want := range []string{`version: "1.2.0"`, `from: "1.1.1"`, `image-tag: "v1.2.0"`, `minor: "1.2"`, `dns: "1-2-0"`} {
		if !strings.Contains(inline, want) {
			t.Errorf("rendered plan lacks %s:\n%s", want, inline)
		}
	}
	abs, _ := filepath.Abs("testdata/hops")
	if l.BaseDir != abs {
		t.Errorf("BaseDir = %s, want the catalog's directory %s", l.BaseDir, abs)
	}
}

func TestAPlanForAnotherVersionIsRefused(t *testing.T) {
	c := openDir(t, "testdata/hops")
	_, err := c.PlanFor(context.Background(), semver.MustParse("1.3.1"), semver.MustParse("1.3.0"))
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "spec.version") || !strings.Contains(err.Error(), "make the plan's version v1.3.1") {
		t.Fatalf("PlanFor(1.3.1) = %v, want spec.version refused for release v1.3.1", err)
	}
}

func TestATemplateErrorNamesTheTemplateAndTheRelease(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "catalog.yaml", `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: bad}
spec:
  planTemplate: plan.tmpl
  releases: [{version: 1.0.0}]
`)
	write(t, dir, "plan.tmpl", "metadata: {name: x-{{ .Verison }}}\n")
	c := openDir(t, dir)
	_, err := c.PlanFor(context.Background(), semver.MustParse("1.0.0"), nil)
	if err == nil || !strings.Contains(err.Error(), "spec.planTemplate plan.tmpl for release 1.0.0") || !strings.Contains(err.Error(), "Verison") {
		t.Fatalf("PlanFor = %v, want the template and the bad field named", err)
	}
	write(t, dir, "plan.tmpl", "{{ env \"HOME\" }}\n")
	if _, err := c.PlanFor(context.Background(), semver.MustParse("1.0.0"), nil); err == nil || !strings.Contains(err.Error(), `"env" not defined`) {
		t.Fatalf("PlanFor with env = %v, want env not defined: a template does not read the environment", err)
	}
}

func TestValidateNamesEveryProblem(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "catalog.yaml", `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: bad}
spec:
  detect:
  - configMap: {namespace: x, name: y}
  - image: {kind: Pod, namespace: x, name: y}
    label: {apiVersion: v1, kind: Node, name: n, key: k}
  - helm: {namespace: x, release: r, field: version}
  releases:
  - {version: 1.0.0, kubernetes: "~> nope"}
  - {version: v1.0.0}
  - {version: one}
  - {version: 1.1.0, plan: p.yaml, installsKubernetes: "1.32.x"}
  - {version: 1.2.0, plan: p.yaml, installsKubernetes: "2.0"}
  - {version: 1.3.0, plan: p.yaml, installsKubernetes: "v1.32.4+k0s.0"}
`)
	_, err := Open(context.Background(), Ref{Path: dir}, Options{})
	if err != nil && strings.Contains(err.Error(), "spec.releases[5].installsKubernetes") {
		t.Errorf("Open = %v\nwant k0s's v1.32.4+k0s.0 taken as a Kubernetes version", err)
	}
	for _, want := range []string{
		`spec.releases[3].installsKubernetes: Invalid value: "1.32.x": not a Kubernetes version: write the version the release installs as 1.32 or 1.32.4`,
		`spec.releases[4].installsKubernetes: Invalid value: "2.0"`,
		"spec.releases[0].plan: Required value: name the release's UpgradePlan file, or give the catalog a spec.planTemplate",
		"spec.releases[0].kubernetes: Invalid value",
		"spec.releases[1].version: Duplicate value",
		"spec.releases[2].version: Invalid value: \"one\": not a semantic version",
		"spec.detect[0].configMap.key: Required value",
		"spec.detect[1].image.kind: Unsupported value: \"Pod\"",
		"spec.detect[1]: Invalid value: \"2 sources\": set exactly one of configMap, image, helm, label",
		"spec.detect[2].helm.field: Unsupported value: \"version\"",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open = %v\nwant it to say %q", err, want)
		}
	}
}

func TestAnUnknownFieldIsNamedWithItsPath(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "catalog.yaml", `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: bad}
spec:
  releases: [{version: 1.0.0, plan: p.yaml, requiredstp: true}]
`)
	_, err := Open(context.Background(), Ref{Path: dir}, Options{})
	var de *plan.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `spec.releases[0].requiredstp: unknown field "requiredstp": did you mean "requiredStop"?`) {
		t.Fatalf("Open = %v, want the unknown field named with its path and the field meant", err)
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]Ref{
		"examples/demo":                      {Path: "examples/demo"},
		"configmap/demo-catalog":             {ConfigMap: "demo-catalog", Namespace: "ns"},
		"cm/demo-catalog":                    {ConfigMap: "demo-catalog", Namespace: "ns"},
		"ConfigMap/demo-catalog":             {ConfigMap: "demo-catalog", Namespace: "ns"},
		"https://example.com/c/catalog.yaml": {URL: "https://example.com/c/catalog.yaml"},
	} {
		got, err := ParseRef(in, "ns")
		if err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                       "--catalog is required",
		"http://example.com/c":   "serve the catalog over https://",
		"configmap/other/demo":   "its namespace with -n",
		"configmap/":             "configmap/NAME",
		"http://u:secret@host/c": "http://xxxxx@host/c",
	} {
		_, err := ParseRef(in, "ns")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret@") {
			t.Errorf("ParseRef(%q) = %v, want an error saying %q (and no password)", in, err, want)
		}
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestValuesFillTheTemplateAndRefuseATypo(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "catalog.yaml", `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: v}
spec:
  planTemplate: plan.tmpl
  values: {crdsURL: "https://github.example/crds"}
  releases: [{version: 1.0.0}]
`)
	write(t, dir, "plan.tmpl", `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: v-{{ .Version }}}
spec:
  version: "{{ .Version }}"
  stages:
  - name: crds
    steps:
    - {name: crds, crds: {url: "{{ .Values.crdsURL }}/{{ .Tag }}/crds.yaml"}}
`)
	c := openDir(t, dir)
	url := func() string {
		t.Helper()
		l, err := c.PlanFor(context.Background(), semver.MustParse("1.0.0"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return l.Plan.Spec.Stages[0].Steps[0].CRDs.URL
	}
	if got := url(); got != "https://github.example/crds/1.0.0/crds.yaml" {
		t.Errorf("default: %s", got)
	}
	if err := c.SetValues(map[string]string{"crdsURL": "https://127.0.0.1:8443/mirror"}); err != nil {
		t.Fatal(err)
	}
	if got := url(); got != "https://127.0.0.1:8443/mirror/1.0.0/crds.yaml" {
		t.Errorf("override: %s", got)
	}
	if err := c.SetValues(map[string]string{"crdsUrl": "x"}); err == nil || !strings.Contains(err.Error(), `value "crdsUrl": catalog`) || !strings.Contains(err.Error(), "its values are crdsURL") {
		t.Errorf("a typo: %v", err)
	}
}

// spec.peers.expected names what it lacks and refuses a missing mode it
// does not know.
func TestExpectedPeersValidation(t *testing.T) {
	errs := validateExpected(field.NewPath("spec", "peers", "expected"), &ExpectedPeers{APIVersion: "core.liqo.io/v1beta1", Kind: "ForeignCluster", SecretLabel: "bad label!", Missing: "Ignore"})
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.peers.expected.idField: Required value: e.g. spec.clusterID", `spec.peers.expected.secretLabel: Invalid value: "bad label!"`,
		`spec.peers.expected.missing: Unsupported value: "Ignore": supported values: "Block", "Warn"`} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
	if errs := validateExpected(field.NewPath("e"), &ExpectedPeers{APIVersion: "core.liqo.io/v1beta1", Kind: "ForeignCluster", IDField: "spec.clusterID", SecretLabel: "liqo.io/remote-cluster-id"}); len(errs) > 0 {
		t.Errorf("a valid one: %v", errs)
	}
}

// spec.valuesFrom names a declared value once, with a source and a field.
func TestValuesFromValidation(t *testing.T) {
	c := &ReleaseCatalog{Spec: Spec{Values: map[string]string{"ha": "false"}, ValuesFrom: []ValueSource{
		{Value: "ha", Installation: &InstallationField{Field: "spec.highAvailability"}},
		{Value: "ha", Installation: &InstallationField{}},
		{Value: "airgap"},
	}}}
	got := validateValuesFrom(field.NewPath("spec", "valuesFrom"), c).ToAggregate().Error()
	for _, want := range []string{`spec.valuesFrom[1].value: Duplicate value: "ha"`, "spec.valuesFrom[1].installation.field: Required value",
		`spec.valuesFrom[2].value: Invalid value: "airgap": declare it in spec.values`, "spec.valuesFrom[2].installation: Required value"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
	if s, ok := scalar(true); !ok || s != "true" {
		t.Errorf("scalar(true) = %q, %v", s, ok)
	}
	if _, ok := scalar(map[string]any{}); ok {
		t.Error("a map taken as a value")
	}
}
