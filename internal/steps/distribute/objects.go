package distribute

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

const (
	// DefaultNamespace, HostPath and MountPath are embedded-cluster's.
	DefaultNamespace = "embedded-cluster"
	DefaultHostPath  = "/var/lib/embedded-cluster"
	DefaultMountPath = "/embedded-cluster"
	// Container is the Jobs' one container, named as embedded-cluster's.
	Container = "embedded-cluster-updater"
	// InstallationAnnotation and HashAnnotation are embedded-cluster's.
	InstallationAnnotation = "embedded-cluster.replicated.com/installation-name"
	HashAnnotation         = "embedded-cluster.replicated.com/artifacts-config-hash"
	// StepLabel marks every object of one step of one attempt: the
	// Reverter finds them all by it, those of nodes that joined late too.
	StepLabel = "upshift.dev/distribute"
	// ComponentLabel is embedded-cluster's component label for its
	// upgrade Jobs.
	ComponentLabel = "app.kubernetes.io/component"
)

var defaultBackoff int32 = 2

// JobName is the Job of node: copy-artifacts-<node>, shortened with a
// hash of the node's name when that is longer than a Job name may be (63,
// as the job-name label it becomes).
func JobName(node string) string {
	name := "copy-artifacts-" + node
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(node))
	// A name cut after a dot or a dash would not be one.
	return strings.TrimRight(name[:63-11], ".-") + "-" + hex.EncodeToString(sum[:])[:10]
}

// configHash is embedded-cluster's artifacts-config-hash: the first ten
// hex digits of the sha256 of the artifacts as JSON, when airgap; empty
// online.
func configHash(spec v1alpha1.DistributeStep) string {
	if !spec.Airgap {
		return ""
	}
	raw, _ := json.Marshal(spec.Artifacts) // a map: sorted keys
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:10]
}

// stepKey is the StepLabel's value for the step of attempt: a hash, as a
// label value is short and the run's name may not be.
func stepKey(attempt step.RunAttempt, stepName string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%s", attempt.Run, attempt.Attempt, stepName)))
	return hex.EncodeToString(sum[:])[:16]
}

// secretName is the step's Secret: one per attempt.
func (e *Executor) secretName() string { return "copy-artifacts-" + e.key }

// job is node's Job.
func (e *Executor) job(node string) *batchv1.Job {
	env := []corev1.EnvVar{{Name: "INSTALLATION", Value: e.spec.Installation}}
	if len(e.spec.Artifacts) > 0 {
		raw, _ := json.Marshal(e.spec.Artifacts)
		env = append(env, corev1.EnvVar{Name: "ARTIFACTS", Value: string(raw)})
	}
	for _, v := range e.spec.Env {
		env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
	}
	for _, v := range e.spec.SecretEnv {
		env = append(env, corev1.EnvVar{Name: v.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: e.secretName()}, Key: v.Name}}})
	}
	dirType := corev1.HostPathDirectory
	backoff := defaultBackoff
	if e.spec.BackoffLimit != nil {
		backoff = *e.spec.BackoffLimit
	}
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: JobName(node), Namespace: e.namespace(),
			Labels: map[string]string{StepLabel: e.key, ComponentLabel: "upgrader", "app.kubernetes.io/managed-by": "upshift"},
			Annotations: map[string]string{InstallationAnnotation: e.spec.Installation, HashAnnotation: configHash(e.spec),
				"upshift.dev/node": node},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{StepLabel: e.key}},
				Spec: corev1.PodSpec{
					NodeName: node, RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: e.spec.ServiceAccountName,
					Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: e.hostPath(), Type: &dirType}}}},
					Containers: []corev1.Container{{
						Name: Container, Image: e.spec.Image, Command: e.spec.Command, Env: env,
						VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: e.mountPath()}},
					}},
				},
			},
		},
	}
}

// secret is the step's Secret holding values (SecretEnv's names to their
// values).
func (e *Executor) secret(values map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: e.secretName(), Namespace: e.namespace(),
			Labels: map[string]string{StepLabel: e.key, "app.kubernetes.io/managed-by": "upshift"}},
		Type: corev1.SecretTypeOpaque,
		Data: values,
	}
}

func toUnstructured(o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		panic(fmt.Sprintf("convert %T: %v", o, err)) // typed objects always convert
	}
	return &unstructured.Unstructured{Object: m}
}

func (e *Executor) namespace() string { return or(e.spec.Namespace, DefaultNamespace) }
func (e *Executor) hostPath() string  { return or(e.spec.HostPath, DefaultHostPath) }
func (e *Executor) mountPath() string { return or(e.spec.MountPath, DefaultMountPath) }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
