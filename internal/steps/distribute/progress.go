package distribute

import (
	"context"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

// nodes are the cluster's nodes by name, sorted.
func (e *Executor) nodes(ctx context.Context) ([]string, error) {
	list, err := e.c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	names := make([]string, len(list.Items))
	for i, n := range list.Items {
		names[i] = n.Name
	}
	sort.Strings(names)
	return names, nil
}

// Reads are what the step reads besides its targets (step.Reader): the
// nodes. (The pods of its Jobs, in its namespace, preflight asks of every
// Job.)
func (e *Executor) Reads() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{{Version: "v1", Resource: "nodes"}}
}

// failed is why a Job failed ("" while it has not): its Failed condition.
func failed(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return ""
}

// failure is the step's failure for node's failed Job: the node, why, and
// the last lines its container logged.
func (e *Executor) failure(ctx context.Context, node string, j *batchv1.Job) step.Result {
	msg := fmt.Sprintf("the Job of node %s (%s/%s) failed: %s", node, j.Namespace, j.Name, failed(j))
	pods, err := e.c.Clientset.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/controller-uid=" + string(j.UID)})
	if err != nil || len(pods.Items) == 0 {
		return step.Failure("%s", msg)
	}
	sort.Slice(pods.Items, func(a, b int) bool { return pods.Items[b].CreationTimestamp.Before(&pods.Items[a].CreationTimestamp) })
	p := &pods.Items[0]
	if lines, err := kube.ContainerLogTail(ctx, e.c.Clientset, p, Container, false); err == nil && len(lines) > 0 {
		// The tail masks inline env values; the ones read from the step's
		// Secret (a license) are scrubbed here.
		msg += fmt.Sprintf("; pod %s logged: %s", p.Name, e.scrubber(ctx).Text(strings.Join(lines, " | ")))
	}
	return step.Failure("%s", msg)
}

// scrubber hides the values of the step's Secret; with none readable, it
// hides nothing more than redact.Text does.
func (e *Executor) scrubber(ctx context.Context) *redact.Scrubber {
	var values []string
	if s, err := e.c.Clientset.CoreV1().Secrets(e.namespace()).Get(ctx, e.secretName(), metav1.GetOptions{}); err == nil {
		for _, v := range s.Data {
			values = append(values, string(v))
		}
	}
	return redact.NewScrubber(values...)
}

// ensureSecret writes the step's Secret with the values SecretEnv names,
// before any Job reads it. A Secret or key missing is the step's failure
// (a result), named; nothing is written then.
func (e *Executor) ensureSecret(ctx context.Context) (*step.Result, error) {
	if len(e.spec.SecretEnv) == 0 {
		return nil, nil
	}
	values := map[string][]byte{}
	for i, v := range e.spec.SecretEnv {
		src, err := e.c.Clientset.CoreV1().Secrets(e.namespace()).Get(ctx, v.Secret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			res := step.Failure("secretEnv[%d] (%s): Secret %s/%s does not exist: create it, or fix the name", i, v.Name, e.namespace(), v.Secret)
			return &res, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read Secret %s/%s for secretEnv[%d]: %w", e.namespace(), v.Secret, i, err)
		}
		val, ok := src.Data[v.Key]
		if !ok {
			res := step.Failure("secretEnv[%d] (%s): Secret %s/%s has no key %s", i, v.Name, e.namespace(), v.Secret, v.Key)
			return &res, nil
		}
		values[v.Name] = val
	}
	if _, err := e.c.Applier.Apply(ctx, toUnstructured(e.secret(values))); err != nil {
		return nil, fmt.Errorf("write Secret %s/%s: %w", e.namespace(), e.secretName(), err)
	}
	return nil, nil
}

// cleanup deletes every Job of the step, their pods with them, and then
// its Secret. What is gone already is success.
func (e *Executor) cleanup(ctx context.Context) error {
	jobs, err := e.c.Clientset.BatchV1().Jobs(e.namespace()).List(ctx, metav1.ListOptions{LabelSelector: StepLabel + "=" + e.key})
	if err != nil {
		return fmt.Errorf("list the step's Jobs in %s: %w", e.namespace(), err)
	}
	for i := range jobs.Items {
		if err := e.deleteJob(ctx, &jobs.Items[i]); err != nil {
			return err
		}
	}
	err = e.c.Clientset.CoreV1().Secrets(e.namespace()).Delete(ctx, e.secretName(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Secret %s/%s: %w", e.namespace(), e.secretName(), err)
	}
	return nil
}

// deleteJob deletes j and, in the background, its pods (a Job's API
// default would orphan them).
func (e *Executor) deleteJob(ctx context.Context, j *batchv1.Job) error {
	bg := metav1.DeletePropagationBackground
	err := e.c.Clientset.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{
		PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &j.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Job %s/%s: %w", j.Namespace, j.Name, err)
	}
	return nil
}
