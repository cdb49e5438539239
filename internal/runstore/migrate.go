package runstore

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// migrate writes a run read from a record of an earlier version (sec) as
// an UpgradeRun, then deletes sec. The plan as written moves into the
// sources' chunks (written anew with it; the resource holds the plan
// redacted), so resuming the run still has it. run must have been read
// at legacySec's version, or the save is a conflict.
func (s *Store) migrate(ctx context.Context, run *v1alpha1.UpgradeRun, legacySec *corev1.Secret) error {
	if runVersion(legacySec) != run.ResourceVersion {
		return fmt.Errorf("%w: the record of run %s (secret %s) changed since it was read", ErrConflict, run.Name, SecretName(run.Name))
	}
	stored, err := decodeLegacy(legacySec, run.Name)
	if err != nil {
		return err
	}
	saved, err := s.LoadSources(ctx, run.Name)
	if err != nil {
		return fmt.Errorf("move run %s out of secret %s: %w", run.Name, legacySec.Name, err)
	}
	ref, err := s.SaveSources(ctx, run.Name, stored.Spec.Plan, saved.Sources)
	if err != nil {
		return fmt.Errorf("move run %s out of secret %s: %w", run.Name, legacySec.Name, err)
	}
	old := run.Spec.Sources
	run.Spec.Sources = &ref
	run.ResourceVersion = ""
	if err := s.create(ctx, run); err != nil {
		run.Spec.Sources, run.ResourceVersion = old, runVersion(legacySec)
		return err
	}
	precondition := metav1.Preconditions{ResourceVersion: &legacySec.ResourceVersion}
	err = retry(ctx, func(int) error {
		err := s.cs.CoreV1().Secrets(s.namespace).Delete(ctx, legacySec.Name, metav1.DeleteOptions{Preconditions: &precondition})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("run %s is saved as an UpgradeRun; deleting its record of an earlier version (secret %s) failed: %w", run.Name, legacySec.Name, err)
	}
	// The old chunks (sources without the plan), if any, carry the run's
	// label: Delete takes them with the run.
	return nil
}
