// Package crd embeds the CustomResourceDefinitions that controller-gen
// generates into bases/ (`make generate`; never edited by hand), so the
// one binary can print them (`upshift crds`) and install or check the ones
// it needs.
//
// Each generated file carries the annotation AnnotationDigest, the SHA-256
// of the file without that line (`make generate` stamps it, see Stamp): a
// CRD on a cluster that carries the same digest is the one this binary was
// built with, whoever installed it (the CLI, `upshift crds | kubectl apply
// -f -`, kustomize or the Helm chart).
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// AnnotationDigest carries the SHA-256 of the generated file a CRD was
// installed from.
const AnnotationDigest = "upshift.dev/crd-digest"

// Names of the embedded CRDs.
const (
	UpgradePlans     = "upgradeplans.upshift.dev"
	UpgradeRuns      = "upgraderuns.upshift.dev"
	PlatformUpgrades = "platformupgrades.upshift.dev"
	ClusterVersions  = "clusterversions.upshift.dev"
	AppRollouts      = "approllouts.upshift.dev"
)

//go:embed bases/*.yaml
var bases embed.FS

// All returns every embedded CRD, annotated with its digest, in the order
// of their names.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		c, err := decode(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns the embedded CRD named name, annotated with its digest. It
// decodes that CRD's file alone: all of them are ~300 KB of YAML, ~14 ms
// of CPU before every run's first write.
func Get(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	file, err := fileOf(name)
	if err != nil {
		return nil, err
	}
	c, err := decode(file)
	if err != nil {
		return nil, err
	}
	if c.Name != name {
		return nil, fmt.Errorf("embedded file %s holds CRD %s, not %s", path.Base(file), c.Name, name)
	}
	return c, nil
}

// DigestOf is the digest the embedded CRD named name is installed with
// (AnnotationDigest), read from its file without decoding it: whether a
// cluster's copy is current is told by this alone.
func DigestOf(name string) (string, error) {
	file, err := fileOf(name)
	if err != nil {
		return "", err
	}
	b, err := bases.ReadFile(file)
	if err != nil {
		return "", err
	}
	digest := Digest(b)
	if got := stamped(b); got != digest {
		return "", fmt.Errorf("embedded CRD %s carries digest %q, its content %q: run `make generate`", path.Base(file), got, digest)
	}
	return digest, nil
}

// fileOf is the file controller-gen writes the CRD named name to:
// bases/<group>_<plural>.yaml for <plural>.<group>.
func fileOf(name string) (string, error) {
	plural, group, ok := strings.Cut(name, ".")
	file := "bases/" + group + "_" + plural + ".yaml"
	if _, err := fs.Stat(bases, file); !ok || err != nil {
		return "", fmt.Errorf("no embedded CRD named %s", name)
	}
	return file, nil
}

func decode(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := bases.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("decode embedded CRD %s: %w", path.Base(file), err)
	}
	digest := Digest(b)
	if got := stamped(b); got != digest {
		return nil, fmt.Errorf("embedded CRD %s carries digest %q, its content %q: run `make generate`", path.Base(file), got, digest)
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[AnnotationDigest] = digest
	c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	return &c, nil
}

// YAML is every embedded CRD, annotated with its digest, as one YAML
// stream (what `upshift crds` prints, for `kubectl apply -f -`).
func YAML() ([]byte, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, c := range all {
		b, err := yaml.Marshal(printable(c))
		if err != nil {
			return nil, err
		}
		out = append(out, "---\n"...)
		out = append(out, b...)
	}
	return out, nil
}

// printable is c without the fields a typed CRD always encodes but a
// manifest should not carry (status, a null creationTimestamp).
func printable(c *apiextensionsv1.CustomResourceDefinition) map[string]any {
	b, _ := yaml.Marshal(c) // a decoded CRD encodes again
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return m
}
