package runstore

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// encodeRun is the run as stored in run.json: named, typed, and without
// the server metadata the Secret owns (a stored resourceVersion would be
// stale the moment it is written).
func encodeRun(run *v1alpha1.UpgradeRun) ([]byte, error) {
	c := *run
	c.ObjectMeta = *run.ObjectMeta.DeepCopy()
	c.ResourceVersion = ""
	c.CreationTimestamp = metav1.Time{}
	c.ManagedFields = nil
	if c.APIVersion == "" {
		c.APIVersion = v1alpha1.APIVersion
	}
	if c.Kind == "" {
		c.Kind = v1alpha1.RunKind
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode run %s: %w", run.Name, err)
	}
	return b, nil
}

// decodeRun reads the run that sec keeps for the run named name.
func decodeRun(sec *corev1.Secret, name string) (*v1alpha1.UpgradeRun, error) {
	raw, ok := sec.Data[KeyRun]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s has no %s", sec.Namespace, sec.Name, KeyRun)
	}
	var run v1alpha1.UpgradeRun
	if err := json.Unmarshal(raw, &run); err != nil {
		return nil, fmt.Errorf("decode %s of secret %s/%s: %w", KeyRun, sec.Namespace, sec.Name, err)
	}
	if name != "" && run.Name != name {
		// Two long names whose shortened Secret names collide.
		return nil, fmt.Errorf("secret %s/%s keeps run %q, not %q", sec.Namespace, sec.Name, run.Name, name)
	}
	run.ResourceVersion = runVersion(sec)
	run.CreationTimestamp = sec.CreationTimestamp
	return &run, nil
}

// runVersion is the Secret's resourceVersion at which its run.json was
// last written: the version a reader of the run holds.
func runVersion(sec *corev1.Secret) string {
	if v := sec.Annotations[annotationRunVersion]; v != "" {
		return v
	}
	return sec.ResourceVersion
}

// annotationsFor mirrors what `kubectl describe` should show: the phase and
// the target version, never content.
func annotationsFor(run *v1alpha1.UpgradeRun) map[string]string {
	return map[string]string{
		AnnotationPhase:       string(run.Status.Phase),
		AnnotationPlanVersion: run.Spec.Plan.Version,
	}
}
