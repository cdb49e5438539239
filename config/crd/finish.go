package crd

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Finish is what `make generate` makes of a CRD file controller-gen
// wrote: the run record's copy of the plan loses its CEL rules (see
// withoutPlanRules), then the file is stamped with its digest. The
// generated-files test finishes controller-gen's output the same way.
func Finish(file []byte) ([]byte, error) {
	b, err := withoutPlanRules(file)
	if err != nil {
		return nil, err
	}
	return Stamp(b)
}

// withoutPlanRules drops the x-kubernetes-validations (CEL rules) under
// spec.plan from the UpgradeRun CRD, and leaves any other CRD as it is.
//
// Why: the API server evaluates every CEL rule of an object on every
// write of it, its status subresource included, though a status patch
// cannot change the spec. A run's spec.plan is written once, by Upshift,
// after the plan passed the same checks in Go (internal/plan), so the
// rules guard nothing there; yet they made each save of the run record
// cost twice what it does without them on the Liqo-shaped plan (11.6 ms
// against 5.8 ms of API server time, 9 stages; more with more stages).
// The plan's schema itself stays: its types, enums and bounds still
// prune and check what is stored, and `kubectl explain` reads it. The
// UpgradePlan CRD keeps every rule: users write those.
func withoutPlanRules(file []byte) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(file, &doc); err != nil {
		return nil, fmt.Errorf("decode CRD: %w", err)
	}
	if name, _, _ := unstructured.NestedString(doc, "metadata", "name"); name != UpgradeRuns {
		return file, nil
	}
	versions, _, _ := unstructured.NestedFieldNoCopy(doc, "spec", "versions")
	list, _ := versions.([]any)
	if len(list) == 0 {
		return nil, fmt.Errorf("CRD %s has no spec.versions", UpgradeRuns)
	}
	for _, v := range list {
		m, _ := v.(map[string]any)
		plan, found, _ := unstructured.NestedFieldNoCopy(m, "schema", "openAPIV3Schema", "properties", "spec", "properties", "plan")
		if !found {
			return nil, fmt.Errorf("CRD %s: a version has no spec.plan schema", UpgradeRuns)
		}
		dropKey(plan, "x-kubernetes-validations")
	}
	// sigs.k8s.io/yaml writes YAML as controller-gen does (keys sorted,
	// lists not indented), so the file differs from its output only by
	// the rules dropped.
	b, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode CRD %s: %w", UpgradeRuns, err)
	}
	return append([]byte("---\n"), b...), nil
}

// dropKey removes key from every map at or below n.
func dropKey(n any, key string) {
	switch n := n.(type) {
	case map[string]any:
		delete(n, key)
		for _, v := range n {
			dropKey(v, key)
		}
	case []any:
		for _, v := range n {
			dropKey(v, key)
		}
	}
}
