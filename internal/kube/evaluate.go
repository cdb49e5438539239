package kube

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Related is what Evaluate looks at besides the object: the pods in its
// namespace that may belong to it and, for a Deployment, its ReplicaSets
// (to tell which pods are of the new revision). Objects that do not belong
// to the evaluated one are ignored, so a superset is fine.
type Related struct {
	Pods        []corev1.Pod
	ReplicaSets []appsv1.ReplicaSet
}

// podWorkloads are the kinds whose current-revision pods are checked for
// crashes and pull errors before kstatus would give up on them.
var podWorkloads = map[string]bool{
	"apps/Deployment":  true,
	"apps/DaemonSet":   true,
	"apps/StatefulSet": true,
	"apps/ReplicaSet":  true,
}

// crdKind keys CustomResourceDefinitions as groupKind does.
const crdKind = "apiextensions.k8s.io/CustomResourceDefinition"

// readsPods tells whether the verdict on an object of the kind reads its
// pods (and a Deployment's ReplicaSets) besides the object itself.
func readsPods(gk string) bool { return podWorkloads[gk] || gk == "batch/Job" }

// Evaluate judges one object. It is pure: kstatus computes the status from
// the object; then a workload whose current-revision pod crash-loops, cannot
// pull its image or cannot be configured is Failing at once (see
// podFailure), and Jobs are judged by evaluateJob. A bare Pod gets the
// same pod checks.
func Evaluate(obj *unstructured.Unstructured, rel Related) Health {
	desc := RefOf(obj).String()
	res, err := status.Compute(obj)
	if err != nil {
		return Health{Status: status.UnknownStatus, Message: fmt.Sprintf("%s: compute status: %v", desc, err)}
	}
	gk := groupKind(obj)
	if gk == "batch/Job" {
		return evaluateJob(desc, obj.Object, res, currentPods(obj, rel))
	}
	h := Health{Status: res.Status, Message: desc + ": " + resultMessage(res)}
	if gk == crdKind && h.Current() && !CRDEstablished(obj) {
		// kstatus reads the conditions, which the API server's naming
		// controller updates a moment after spec.names changed: until
		// the names it accepted are the spec's, the CRD is not yet what
		// was asked for (and a clash then makes it Failed).
		return Health{Status: status.InProgressStatus, Message: desc + ": its new names are not accepted yet"}
	}
	if gk == "Pod" && !h.Current() {
		// kstatus sees a crash loop in a Running pod, not a pull error.
		var pod corev1.Pod
		// A pod that does not decode keeps kstatus's verdict.
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &pod); err == nil {
			if msg, logs := podFailureOf(&pod, true); msg != "" {
				return Health{Status: status.FailedStatus, Message: desc + ": " + msg, Logs: logs}
			}
		}
		return h
	}
	if !podWorkloads[gk] || h.Status == status.CurrentStatus || h.Status == status.TerminatingStatus {
		return h
	}
	// Pods explain more than kstatus's "progress deadline exceeded" does,
	// so they win even when kstatus already says Failed.
	if msg, logs := firstPodFailure(currentPods(obj, rel), true); msg != "" {
		return Health{Status: status.FailedStatus, Message: desc + ": " + msg, Logs: logs}
	}
	return h
}

// resultMessage adds the Stalled condition's message to kstatus's summary,
// e.g. `Progress deadline exceeded: ReplicaSet "web-7d9f" has timed out progressing.`
func resultMessage(res *status.Result) string {
	for _, c := range res.Conditions {
		if c.Type == status.ConditionStalled && c.Message != "" && c.Message != res.Message {
			return res.Message + ": " + c.Message
		}
	}
	return res.Message
}

// groupKind keys kinds as "group/Kind", or "Kind" for the core group.
func groupKind(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Group + "/" + gvk.Kind
}
