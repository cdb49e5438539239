//go:build bench

package bench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// target is what the cluster holds once an upgrade reached its version.
type target struct {
	images   []image
	versions []versioned
}

// image: the workload runs it in the container, rolled out everywhere.
type image struct {
	gvr                        schema.GroupVersionResource
	namespace, name, container string
	image                      string
}

// versioned: count objects match the selector, each labelled with the
// version (and each CRD Established).
type versioned struct {
	gvr                 schema.GroupVersionResource
	namespace, selector string
	count               int
	version             string
}

// reached says what of the target the cluster does not hold, or nil.
func (tg target) reached(cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, im := range tg.images {
		o, err := dyn.Resource(im.gvr).Namespace(im.namespace).Get(ctx, im.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := containerImage(o, im.container); got != im.image {
			return fmt.Errorf("%s %s/%s container %s runs %q, want %q", im.gvr.Resource, im.namespace, im.name, im.container, got, im.image)
		}
		if !rolledOut(o) {
			return fmt.Errorf("%s %s/%s has not rolled out: %v", im.gvr.Resource, im.namespace, im.name, o.Object["status"])
		}
	}
	for _, v := range tg.versions {
		list, err := dyn.Resource(v.gvr).Namespace(v.namespace).List(ctx, metav1.ListOptions{LabelSelector: v.selector})
		if err != nil {
			return err
		}
		if len(list.Items) != v.count {
			return fmt.Errorf("%d %s match %s, want %d", len(list.Items), v.gvr.Resource, v.selector, v.count)
		}
		for _, o := range list.Items {
			if got := o.GetLabels()["app.kubernetes.io/version"]; got != v.version {
				return fmt.Errorf("%s %s is at version %q, want %q", v.gvr.Resource, o.GetName(), got, v.version)
			}
			if v.gvr.Resource == "customresourcedefinitions" && !established(&o) {
				return fmt.Errorf("CRD %s is not Established", o.GetName())
			}
		}
	}
	return nil
}

func containerImage(o *unstructured.Unstructured, container string) string {
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["name"] == container {
			s, _ := m["image"].(string)
			return s
		}
	}
	return ""
}

// rolledOut: the controller saw the last change and every replica runs it.
func rolledOut(o *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	if observed < o.GetGeneration() {
		return false
	}
	n := func(f string) int64 { v, _, _ := unstructured.NestedInt64(o.Object, "status", f); return v }
	if o.GetKind() == "DaemonSet" {
		return n("updatedNumberScheduled") == n("desiredNumberScheduled") && n("numberAvailable") == n("desiredNumberScheduled")
	}
	want, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	return n("updatedReplicas") == want && n("availableReplicas") == want && n("replicas") == want
}

func established(o *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
