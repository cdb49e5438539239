package kube

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// deploymentRevision is set by the Deployment controller on a Deployment
	// and its ReplicaSets; the ReplicaSet whose value equals the
	// Deployment's is the new one.
	deploymentRevision = "deployment.kubernetes.io/revision"
	// templateGeneration labels DaemonSet pods with the template generation
	// they were made from; the API server keeps the DaemonSet's in the
	// appsv1.DeprecatedTemplateGeneration annotation.
	templateGeneration = "pod-template-generation"
)

// currentPods returns the pods of the workload's current revision, sorted by
// name; old-revision pods are left out so that their crashes never fail a
// rollout that is replacing them. How the revision is told:
//
//   - Deployment: pods controlled by the ReplicaSet whose revision annotation
//     equals the Deployment's (the controller's own bookkeeping);
//   - StatefulSet: pods whose controller-revision-hash is status.updateRevision;
//   - DaemonSet: pods whose pod-template-generation equals the DaemonSet's
//     template generation (as the DaemonSet controller's IsPodUpdated does);
//   - ReplicaSet and Job: every pod they control (one template).
//
// Until the controller has observed the latest generation nothing is
// returned: its status may still describe the previous revision.
func currentPods(u *unstructured.Unstructured, rel Related) []corev1.Pod {
	var pods []corev1.Pod
	switch groupKind(u) {
	case "apps/Deployment":
		if !observed(u) {
			return nil
		}
		rs := newReplicaSet(u, rel.ReplicaSets)
		if rs == nil {
			return nil
		}
		pods = controlledBy(rel.Pods, rs.UID, func(*corev1.Pod) bool { return true })
	case "apps/StatefulSet":
		rev, _, _ := unstructured.NestedString(u.Object, "status", "updateRevision")
		if !observed(u) || rev == "" {
			return nil
		}
		pods = controlledBy(rel.Pods, u.GetUID(), func(p *corev1.Pod) bool {
			return p.Labels[appsv1.StatefulSetRevisionLabel] == rev
		})
	case "apps/DaemonSet":
		gen := u.GetAnnotations()[appsv1.DeprecatedTemplateGeneration]
		if !observed(u) || gen == "" {
			return nil
		}
		pods = controlledBy(rel.Pods, u.GetUID(), func(p *corev1.Pod) bool {
			return p.Labels[templateGeneration] == gen
		})
	case "apps/ReplicaSet":
		if !observed(u) {
			return nil
		}
		pods = controlledBy(rel.Pods, u.GetUID(), func(*corev1.Pod) bool { return true })
	case "batch/Job":
		pods = controlledBy(rel.Pods, u.GetUID(), func(*corev1.Pod) bool { return true })
	default:
		return nil
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// observed reports whether the controller has seen the latest spec.
func observed(u *unstructured.Unstructured) bool {
	og, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return err == nil && found && og >= u.GetGeneration()
}

// newReplicaSet finds the Deployment's ReplicaSet of its latest revision.
func newReplicaSet(d *unstructured.Unstructured, rss []appsv1.ReplicaSet) *appsv1.ReplicaSet {
	rev := d.GetAnnotations()[deploymentRevision]
	if rev == "" {
		return nil
	}
	for i := range rss {
		rs := &rss[i]
		if isControlledBy(rs.OwnerReferences, d.GetUID()) && rs.Annotations[deploymentRevision] == rev {
			return rs
		}
	}
	return nil
}

func controlledBy(pods []corev1.Pod, owner types.UID, keep func(*corev1.Pod) bool) []corev1.Pod {
	var out []corev1.Pod
	for i := range pods {
		if isControlledBy(pods[i].OwnerReferences, owner) && keep(&pods[i]) {
			out = append(out, pods[i])
		}
	}
	return out
}

func isControlledBy(refs []metav1.OwnerReference, owner types.UID) bool {
	if owner == "" {
		return false
	}
	for _, r := range refs {
		if r.Controller != nil && *r.Controller && r.UID == owner {
			return true
		}
	}
	return false
}
