package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Health is the verdict on one object (or one selector's objects).
//
// Status is kstatus's: Current (ready), InProgress, Failed, Terminating,
// NotFound or Unknown. Failed here also covers what Evaluate adds to kstatus
// (crashing new pods, a failed Job). Message is for people and names the
// object, e.g. "deployment demo/web: Available: 1/3".
type Health struct {
	Status  status.Status
	Message string
	// Logs names the container whose crash made the verdict Failing, when
	// its log can say why (nil otherwise): a Waiter with a LogTail adds
	// the log's last lines to the message.
	Logs *ContainerRef
	// Pods are the pods the verdict on one workload read (its own, from
	// the informer the wait read): a step that checks them after the
	// rollout starts from these rather than list them again. Nil for a
	// verdict on several objects, or one that read none.
	Pods []corev1.Pod
	// Object is the object the verdict on one workload read, shared with
	// the informer: read it, never change it. Its status is as recent as
	// Pods (a write's answer may predate its controller's count of the
	// pods it wants). Nil for a verdict on several objects.
	Object *unstructured.Unstructured
}

// ContainerRef names one container of a pod; Previous asks for the log of
// its previous instance (the one that crashed).
type ContainerRef struct {
	Namespace, Pod, Container string
	Previous                  bool
}

// Current reports whether the object is ready.
func (h Health) Current() bool { return h.Status == status.CurrentStatus }

// Failing reports whether the object is broken and waiting more will not help.
func (h Health) Failing() bool { return h.Status == status.FailedStatus }

func (h Health) String() string { return string(h.Status) + ": " + h.Message }
