package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// schema is one OpenAPI v3 schema of a CRD, as YAML will print it.
type schema = map[string]any

// errModuleMissing: the k8s.io/kubernetes module could not be had (not in
// the module cache, and the proxy not asked or not reachable).
var errModuleMissing = errors.New("the Kubernetes module is not available")

// k8sSchemas are the component schemas of the Kubernetes API that Liqo's
// CRDs embed (a Deployment's spec, a Pod's, a Service's), read from the
// OpenAPI documents of the Kubernetes release the local cluster runs.
type k8sSchemas map[string]schema

// loadK8sSchemas reads api/openapi-spec/v3 of the k8s.io/kubernetes
// module (in the module cache once `make cluster-binaries` has built the
// control plane).
func loadK8sSchemas() (k8sSchemas, error) {
	mod := "k8s.io/kubernetes@" + localcluster.KubernetesVersion
	// Asked inside the control plane's recipe module, whose go.sum holds
	// the module's checksum: outside it, go checks a module it has cached
	// against the checksum database, which a test (GOPROXY=off) cannot
	// reach.
	tmp, err := os.MkdirTemp("", "liqo-gen-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	recipe, err := localcluster.WriteRecipe(tmp, "kubernetes")
	if err != nil {
		return nil, err
	}
	// go mod download -json prints its JSON (with Error) and exits 1
	// when the module cannot be had: read the JSON either way.
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = recipe
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, runErr := cmd.Output()
	var dl struct{ Dir, Error string }
	if err := json.Unmarshal(out, &dl); err != nil {
		return nil, fmt.Errorf("go mod download %s: %v, %w (the generator reads its OpenAPI documents)", mod, runErr, err)
	}
	if dl.Error != "" || dl.Dir == "" {
		return nil, fmt.Errorf("%w: go mod download %s: %s", errModuleMissing, mod, dl.Error)
	}
	all := k8sSchemas{}
	for _, f := range []string{"api__v1_openapi.json", "apis__apps__v1_openapi.json", "apis__discovery.k8s.io__v1_openapi.json"} {
		b, err := os.ReadFile(filepath.Join(dl.Dir, "api", "openapi-spec", "v3", f))
		if err != nil {
			return nil, err
		}
		var doc struct {
			Components struct {
				Schemas map[string]schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for k, v := range doc.Components.Schemas {
			all[k] = v
		}
	}
	return all, nil
}

// embed is the named Kubernetes type inlined as controller-gen inlines a
// Go field of that type into a CRD: references resolved, ObjectMeta an
// opaque object, quantities and int-or-strings as anyOf, and only the
// keywords a CRD's structural schema accepts.
func (k k8sSchemas) embed(name, description string) schema {
	s := k.inline(k.ref(name), 0)
	if description != "" {
		s["description"] = description
	}
	return s
}

func (k k8sSchemas) ref(name string) schema {
	s, ok := k[name]
	if !ok {
		panic("no Kubernetes schema " + name)
	}
	return s
}

const (
	objectMeta  = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	quantity    = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	intOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
)

// kept are the keywords copied into a CRD's schema.
var kept = map[string]bool{
	"type": true, "format": true, "description": true, "required": true, "enum": true,
	"x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true, "x-kubernetes-map-type": true,
}

func (k k8sSchemas) inline(in schema, depth int) schema {
	if depth > 40 {
		panic("schema nests deeper than 40: a recursive type")
	}
	if ref, ok := in["$ref"].(string); ok {
		return k.named(strings.TrimPrefix(ref, "#/components/schemas/"), depth)
	}
	if all, ok := in["allOf"].([]any); ok && len(all) == 1 {
		out := k.inline(all[0].(schema), depth)
		if d, ok := in["description"]; ok {
			out["description"] = d
		}
		if d, ok := in["default"]; ok && scalarDefault(d) {
			out["default"] = d
		}
		return out
	}
	out := schema{}
	for key, v := range in {
		switch {
		case kept[key]:
			out[key] = v
		case key == "default" && scalarDefault(v):
			out[key] = v
		case key == "properties":
			props := schema{}
			for name, p := range v.(schema) {
				props[name] = k.inline(p.(schema), depth+1)
			}
			out[key] = props
		case key == "items" || key == "additionalProperties":
			if p, ok := v.(schema); ok {
				out[key] = k.inline(p, depth+1)
			}
		}
	}
	return out
}

func (k k8sSchemas) named(name string, depth int) schema {
	switch name {
	case objectMeta:
		return schema{"type": "object"}
	case quantity:
		return schema{
			"anyOf":                      []any{schema{"type": "integer"}, schema{"type": "string"}},
			"pattern":                    `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
			"x-kubernetes-int-or-string": true,
		}
	case intOrString:
		return schema{"anyOf": []any{schema{"type": "integer"}, schema{"type": "string"}}, "x-kubernetes-int-or-string": true}
	}
	out := k.inline(k.ref(name), depth)
	if _, typed := out["type"]; !typed {
		out["type"] = "object"
	}
	return out
}

// scalarDefault keeps defaults such as a port's protocol "TCP" (and ""
// for a reference's name, a key of its list); the Kubernetes documents'
// object defaults ({}) are not written by controller-gen.
func scalarDefault(v any) bool {
	switch v.(type) {
	case string, float64, bool:
		return true
	}
	return false
}
