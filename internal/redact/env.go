package redact

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// EnvValues returns a deep copy of u in which every container
// environment variable's literal value (an "env" list entry's "value",
// wherever a pod spec sits: a Pod, a workload's template, a CronJob's job
// template) is replaced by "<redacted N bytes>". Variables set inline are
// often credentials in practice, and what is written into a run's status
// (a restore's differences) is readable by whoever may read runs; a
// valueFrom names a Secret or ConfigMap key, not its content, and stays.
func EnvValues(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	out := u.DeepCopy()
	hideEnv(out.Object)
	return out
}

func hideEnv(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if list, ok := child.([]any); ok && k == "env" {
				for _, e := range list {
					if m, ok := e.(map[string]any); ok {
						if val, ok := m["value"]; ok {
							m["value"] = hidden(val, false, "")
						}
					}
				}
				continue
			}
			hideEnv(child)
		}
	case []any:
		for _, child := range v {
			hideEnv(child)
		}
	}
}
