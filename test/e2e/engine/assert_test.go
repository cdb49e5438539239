package engine_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// annotations the API server and controllers maintain; everything else
// must come back exactly.
var maintained = map[string]bool{
	"deployment.kubernetes.io/revision":        true,
	"deprecated.daemonset.template.generation": true,
}

func userAnnotations(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !maintained[k] {
			out[k] = v
		}
	}
	return out
}

// assertRestored fails unless every object equals the test's own capture
// taken before apply (modulo what the API server maintains), and the
// workloads run the captured images again.
func (w *world) assertRestored(before capture) {
	w.t.Helper()
	after := w.capture()
	diff := func(what string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			w.t.Errorf("%s differs from the capture:\nbefore: %s\nafter:  %s", what, ja, jb)
		}
	}
	diff("deployment shop/web spec", before.web.Spec, after.web.Spec)
	diff("deployment shop/web labels", before.web.Labels, after.web.Labels)
	diff("deployment shop/web annotations", userAnnotations(before.web.Annotations), userAnnotations(after.web.Annotations))
	diff("daemonset shop/agent spec", before.agent.Spec, after.agent.Spec)
	diff("daemonset shop/agent annotations", userAnnotations(before.agent.Annotations), userAnnotations(after.agent.Annotations))
	diff("configmap shop/settings data", before.settings.Data, after.settings.Data)
	diff("configmap shop/settings labels", before.settings.Labels, after.settings.Labels)
	w.waitImages("app=web", "app", before.web.Spec.Template.Spec.Containers[0].Image)
	w.waitImages("app=agent", "agent", before.agent.Spec.Template.Spec.Containers[0].Image)
}

// waitImages waits until every live pod of the selector is Running and
// Ready and its container reports image (what the kubelet runs).
func (w *world) waitImages(selector, container, image string) {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ok, why := w.podsRun(selector, container, image)
		if ok {
			return
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	w.t.Fatalf("pods %q do not all run %s: %s", selector, image, last)
}

func (w *world) podsRun(selector, container, image string) (bool, string) {
	pods, err := w.cs.CoreV1().Pods("shop").List(w.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return false, err.Error()
	}
	live := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		if p.Status.Phase != corev1.PodRunning {
			return false, fmt.Sprintf("pod %s is %s", p.Name, p.Status.Phase)
		}
		found := false
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == container {
				found = true
				if cs.Image != image || !cs.Ready {
					return false, fmt.Sprintf("pod %s runs %s (ready %v)", p.Name, cs.Image, cs.Ready)
				}
			}
		}
		if !found {
			return false, fmt.Sprintf("pod %s reports no status for %s", p.Name, container)
		}
	}
	if live == 0 {
		return false, "no live pods"
	}
	return true, ""
}

// run reads the run record through `upshift status -o json`.
func (w *world) run(name string) *v1alpha1.UpgradeRun {
	w.t.Helper()
	r := w.mustExit(0, nil, "status", name, "-o", "json")
	var run v1alpha1.UpgradeRun
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		w.t.Fatalf("decode status: %v\n%s", err, r.stdout)
	}
	return &run
}

func mustContain(t interface {
	Helper()
	Errorf(string, ...any)
}, what, s string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, s)
		}
	}
}

// eventually polls cond for up to 30s.
func (w *world) eventually(what string, cond func() (bool, string)) {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("%s: not after 30s (%s)", what, last)
}
