package crd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// Every generated file is embedded, annotated with the digest of that
// file, and printed as a stream kubectl reads back to the same CRDs.
func TestEmbeddedCRDs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated CRD in bases/: %v", err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(files) {
		t.Fatalf("All: %d CRDs, bases/ holds %d files", len(all), len(files))
	}
	digests := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		// The file carries its digest: the SHA-256 of the file without
		// that line.
		var rest []string
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.Contains(line, AnnotationDigest+":") {
				rest = append(rest, line)
			}
		}
		sum := sha256.Sum256([]byte(strings.Join(rest, "")))
		digests[c.Name] = "sha256:" + hex.EncodeToString(sum[:])
		if got := c.Annotations[AnnotationDigest]; got != digests[c.Name] {
			t.Errorf("%s carries digest %q, its content's is %q: run make generate", f, got, digests[c.Name])
		}
	}
	for _, name := range []string{UpgradePlans, UpgradeRuns} {
		c, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Annotations[AnnotationDigest]; got != digests[name] || got == "" {
			t.Errorf("%s: digest annotation %q, want the file's %q", name, got, digests[name])
		}
		if c.Annotations["controller-gen.kubebuilder.io/version"] == "" {
			t.Errorf("%s lost controller-gen's annotation", name)
		}
	}
	if _, err := Get("nope.upshift.dev"); err == nil {
		t.Error("Get of an unknown CRD: no error")
	}

	stream, err := YAML()
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(stream, []byte("---\n"))
	var printed []string
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal(d, &m); err != nil {
			t.Fatal(err)
		}
		meta, _ := m["metadata"].(map[string]any)
		if _, ok := m["status"]; ok || meta["creationTimestamp"] != nil || len(meta) != 2 {
			t.Errorf("a printed CRD carries server fields: status %v, metadata %v", m["status"], meta)
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(d, &c); err != nil {
			t.Fatalf("printed CRD does not decode: %v", err)
		}
		if c.Kind != "CustomResourceDefinition" || c.Annotations[AnnotationDigest] != digests[c.Name] {
			t.Errorf("printed %s %s with digest %q, want %q", c.Kind, c.Name, c.Annotations[AnnotationDigest], digests[c.Name])
		}
		printed = append(printed, c.Name)
	}
	if got := strings.Join(printed, " "); got != AppRollouts+" "+ClusterVersions+" "+PlatformUpgrades+" "+UpgradePlans+" "+UpgradeRuns {
		t.Errorf("printed %s, want the five CRDs", got)
	}
}

// The run record's copy of the plan has the UpgradePlan's schema without
// its CEL rules (which the API server would evaluate on every save of
// the run), and nothing else is dropped; the UpgradePlan keeps them.
func TestRunsPlanSchemaHasNoRules(t *testing.T) {
	runs, err := Get(UpgradeRuns)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Get(UpgradePlans)
	if err != nil {
		t.Fatal(err)
	}
	runPlan := runs.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["plan"]
	planSpec := plans.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if n := countRules(&runPlan); n != 0 {
		t.Errorf("UpgradeRun's spec.plan schema holds %d CEL rules, want none: run `make generate`", n)
	}
	if n := countRules(&planSpec); n < 20 {
		t.Errorf("UpgradePlan's spec schema holds %d CEL rules, want its own (at least 20)", n)
	}
	stripRules(&planSpec)
	for name, want := range planSpec.Properties {
		got, ok := runPlan.Properties[name]
		if !ok {
			t.Errorf("UpgradeRun's spec.plan lacks the plan's field %s", name)
			continue
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("UpgradeRun's spec.plan.%s schema differs from the UpgradePlan's spec.%s beyond its rules", name, name)
		}
	}
}

func countRules(s *apiextensionsv1.JSONSchemaProps) int {
	n := 0
	walkSchema(s, func(p *apiextensionsv1.JSONSchemaProps) { n += len(p.XValidations) })
	return n
}

func stripRules(s *apiextensionsv1.JSONSchemaProps) {
	walkSchema(s, func(p *apiextensionsv1.JSONSchemaProps) { p.XValidations = nil })
}

// walkSchema calls f on s and every schema below it.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, f func(*apiextensionsv1.JSONSchemaProps)) {
	f(s)
	for k, p := range s.Properties {
		walkSchema(&p, f)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(s.Items.Schema, f)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(s.AdditionalProperties.Schema, f)
	}
}
