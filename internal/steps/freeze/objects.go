package freeze

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

// The kinds a freeze writes, in admissionregistration.k8s.io/v1 (GA
// since Kubernetes 1.30).
const (
	APIVersion  = "admissionregistration.k8s.io/v1"
	PolicyKind  = "ValidatingAdmissionPolicy"
	BindingKind = "ValidatingAdmissionPolicyBinding"
)

// namespaceLabel is the label every namespace carries with its own name.
const namespaceLabel = "kubernetes.io/metadata.name"

// refs are the policy and its binding, in the order they are created.
func (e *Executor) refs() []step.Ref {
	return []step.Ref{
		{APIVersion: APIVersion, Kind: PolicyKind, Name: e.name},
		{APIVersion: APIVersion, Kind: BindingKind, Name: e.name},
	}
}

// objects are the policy and its binding as the step applies them.
func (e *Executor) objects() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{e.policy(), e.binding()}
}

func (e *Executor) meta(kind string) map[string]any {
	return map[string]any{
		"apiVersion": APIVersion,
		"kind":       kind,
		"metadata": map[string]any{
			"name":        e.name,
			"labels":      map[string]any{LabelRun: labelValue(e.run), LabelManagedBy: ManagedBy},
			"annotations": map[string]any{AnnotationRun: e.run, AnnotationStep: e.step},
		},
	}
}

// policy denies every request its rules match ("false" never holds),
// plus the probe (see the package doc), and nothing in the runs
// namespace but the probe: Upshift keeps its records, backups and lease
// there.
func (e *Executor) policy() *unstructured.Unstructured {
	var rules []any
	for _, r := range e.spec.Rules {
		rules = append(rules, map[string]any{
			"apiGroups":   strs(r.APIGroups),
			"apiVersions": []any{"*"},
			"resources":   strs(r.Resources),
			"operations":  strs(r.Operations),
			"scope":       "*",
		})
	}
	rules = append(rules, map[string]any{
		"apiGroups":     []any{""},
		"apiVersions":   []any{"v1"},
		"resources":     []any{"secrets"},
		"operations":    []any{"CREATE"},
		"resourceNames": []any{e.name},
	})
	// Both names are DNS names: nothing to escape in a CEL string. A
	// request for a cluster-scoped object has no namespace: reading it
	// would be an error, which failurePolicy Fail turns into a denial
	// with the CEL error instead of the plan's message.
	outsideRuns := fmt.Sprintf("!has(request.namespace) || request.namespace != '%s' || (request.resource.group == '' && request.resource.resource == 'secrets' && request.name == '%s')", e.runs.Namespace, e.name)
	o := e.meta(PolicyKind)
	o["spec"] = map[string]any{
		"failurePolicy":    "Fail",
		"matchConstraints": map[string]any{"resourceRules": rules},
		"matchConditions":  []any{map[string]any{"name": "outside-upshift-runs", "expression": outsideRuns}},
		"validations": []any{map[string]any{
			"expression": "false",
			"message":    e.message(),
			"reason":     "Forbidden",
		}},
	}
	return &unstructured.Unstructured{Object: o}
}

// binding puts the policy in force, denying. With namespaces, a
// namespaceSelector limits it to them, and to the runs namespace, where
// the policy matches only the probe.
func (e *Executor) binding() *unstructured.Unstructured {
	spec := map[string]any{
		"policyName":        e.name,
		"validationActions": []any{"Deny"},
	}
	if len(e.spec.Namespaces) > 0 {
		spec["matchResources"] = map[string]any{
			"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key":      namespaceLabel,
				"operator": "In",
				"values":   strs(append(append([]string{}, e.spec.Namespaces...), e.runs.Namespace)),
			}}},
		}
	}
	o := e.meta(BindingKind)
	o["spec"] = spec
	return &unstructured.Unstructured{Object: o}
}

// message is what a denied request reads: the plan's, cleaned of URL
// credentials as everything Upshift writes into the cluster is, or one
// that says who froze it and until when.
func (e *Executor) message() string {
	if m := strings.TrimSpace(e.spec.Message); m != "" {
		return redact.Text(m)
	}
	return fmt.Sprintf("frozen by Upshift while run %s upgrades this cluster (step %s); try again once the run has ended", e.run, e.step)
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
