package runstore

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// resourceFor is the UpgradeRun created for run: named and labelled, its
// plan redacted (the plan as written stays in the sources' chunks), and
// without status (a create does not set a status subresource; the status
// is written right after).
func resourceFor(run *v1alpha1.UpgradeRun, namespace string) *v1alpha1.UpgradeRun {
	spec := run.Spec
	spec.Plan = redact.PlanSpec(run.Spec.Plan)
	labels := labelsFor(run.Name)
	if o := run.Spec.Owner; o != nil && o.UID != "" {
		labels[LabelOwnerUID] = string(o.UID)
	}
	return &v1alpha1.UpgradeRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.RunKind},
		ObjectMeta: metav1.ObjectMeta{Name: run.Name, Namespace: namespace, Labels: labels},
		Spec:       spec,
	}
}

// statusOf is the run's status as the resource keeps it: every message
// through redact (messages are clean where they are made; records of
// earlier versions may hold raw URLs), split for diffing.
func statusOf(run *v1alpha1.UpgradeRun) (storedStatus, error) {
	st := redact.RunStatus(run.Status)
	return splitStatus(&st)
}

// fromResource completes a run read from the API: its kind, and the
// status of a run created but whose status was not written yet (the
// process stopped in between): Pending, not started.
func fromResource(run *v1alpha1.UpgradeRun) *v1alpha1.UpgradeRun {
	run.APIVersion, run.Kind = v1alpha1.APIVersion, v1alpha1.RunKind
	if run.Status.Phase == "" {
		run.Status.Phase = v1alpha1.RunPending
	}
	return run
}
