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
	if got := strings.Join(printed, " "); got != ClusterVersions+" "+PlatformUpgrades+" "+UpgradePlans+" "+UpgradeRuns {
		t.Errorf("printed %s, want the four CRDs", got)
	}
}
