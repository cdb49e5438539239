package envkept

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// containerEnv is the env of the container named name in a workload's pod
// template (containers first, then init containers: a sidecar is one).
// found is false when there is no such container; names are the
// containers there are, for the message.
func containerEnv(w *unstructured.Unstructured, name string) (env []corev1.EnvVar, found bool, names []string, err error) {
	raw, ok, err := unstructured.NestedMap(w.Object, "spec", "template", "spec")
	if err != nil || !ok {
		return nil, false, nil, fmt.Errorf("%s has no pod template (spec.template.spec): %v", refOf(w), err)
	}
	var pod corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &pod); err != nil {
		return nil, false, nil, fmt.Errorf("read the pod template of %s: %w", refOf(w), err)
	}
	for _, list := range [][]corev1.Container{pod.Containers, pod.InitContainers} {
		for _, c := range list {
			if c.Name == name {
				return c.Env, true, nil, nil
			}
			names = append(names, c.Name)
		}
	}
	return nil, false, names, nil
}
