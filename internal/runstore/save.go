package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/conditions"
	"github.com/upshift-dev/upshift/internal/kube"
)

// Save creates the run (empty ResourceVersion) or updates its status with
// its ResourceVersion as precondition: if another process saved the run
// since it was read, Save returns an error wrapping ErrConflict and writes
// nothing. A create writes the resource (its plan redacted), then its
// status. An update sends, as a JSON patch of the status subresource,
// only what changed (down to a step's field) since this Store last read
// or wrote the run at that version; otherwise the whole status. The
// status's observedGeneration and conditions are set from the rest of it
// first. A run read from a record of an earlier version is written as an
// UpgradeRun, and the old record deleted. On success run.ResourceVersion
// is the new version.
func (s *Store) Save(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	if run == nil || run.Name == "" {
		return errors.New("save run: the run has no name")
	}
	var err error
	if run.ResourceVersion == "" {
		err = s.create(ctx, run)
	} else {
		err = s.update(ctx, run)
	}
	if err != nil {
		s.written.forget(run.Name)
		return fmt.Errorf("save run %s: %w", run.Name, err)
	}
	return nil
}

// create writes the resource, then its status.
func (s *Store) create(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	if err := s.createResource(ctx, run); err != nil {
		return err
	}
	return s.writeStatus(ctx, run, nil)
}

// Create writes a new run's resource but not its status, which its first
// Save writes: a reader in between sees the run Pending, and a run found
// so (its status.attempt 0) never started. A new run's status is saved
// with the first transition of its drive, one write less before its
// first change. Errors as Save's.
func (s *Store) Create(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	if run == nil || run.Name == "" || run.ResourceVersion != "" {
		return errors.New("create run: a new run with a name is needed")
	}
	if err := s.createResource(ctx, run); err != nil {
		s.written.forget(run.Name)
		return fmt.Errorf("save run %s: %w", run.Name, err)
	}
	return nil
}

// createResource writes the resource, its plan redacted, and sets the
// run's metadata from the answer.
func (s *Store) createResource(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	obj := resourceFor(run, s.namespace)
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var created v1alpha1.UpgradeRun
	err = retry(ctx, func(attempt int) error {
		err := s.runs.Post().Namespace(s.namespace).Resource(Resource).
			Param("fieldManager", kube.FieldManager).Body(body).Do(ctx).Into(&created)
		if apierrors.IsAlreadyExists(err) && attempt > 1 {
			// An earlier attempt may have landed and only its answer
			// was lost: then the stored run is ours.
			var cur v1alpha1.UpgradeRun
			gerr := s.runs.Get().Namespace(s.namespace).Resource(Resource).Name(run.Name).Do(ctx).Into(&cur)
			if gerr == nil && sameSpec(&cur, obj) && cur.Status.Phase == "" {
				created = cur
				return nil
			}
			if gerr != nil && retriable(gerr) {
				return gerr
			}
		}
		return err
	})
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("%w: a run named %s is stored already", ErrConflict, run.Name)
	case noResource(err):
		return errNoCRD(err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("namespace %s: %w", s.namespace, err)
	case err != nil:
		return err
	}
	run.Namespace, run.UID, run.Generation = created.Namespace, created.UID, created.Generation
	run.CreationTimestamp, run.Labels = created.CreationTimestamp, created.Labels
	// The status is written with the created version as precondition; a
	// reader in between sees the run Pending (fromResource).
	run.ResourceVersion = created.ResourceVersion
	s.written.forget(run.Name) // no status stored: the first Save writes it whole
	return nil
}

func sameSpec(a, b *v1alpha1.UpgradeRun) bool {
	x, err1 := json.Marshal(a.Spec)
	y, err2 := json.Marshal(b.Spec)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// update writes the run's status; a run of an earlier version's record
// is migrated.
func (s *Store) update(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	err := s.writeStatus(ctx, run, s.written.at(run.Name, run.ResourceVersion))
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	sec, lerr := s.legacySecret(ctx, run.Name)
	if lerr != nil {
		return lerr
	}
	if sec == nil {
		return err
	}
	return s.migrate(ctx, run, sec)
}

// writeStatus patches the status subresource from last (the status known
// to be stored at run.ResourceVersion; nil when not known) to the run's.
func (s *Store) writeStatus(ctx context.Context, run *v1alpha1.UpgradeRun, last *storedStatus) error {
	conditions.SetRunStatus(run, metav1.NewTime(s.now()))
	next, err := statusOf(run)
	if err != nil {
		return fmt.Errorf("encode the status of run %s: %w", run.Name, err)
	}
	patch, err := statusPatch(run.ResourceVersion, last, next)
	if err != nil {
		return fmt.Errorf("encode the status of run %s: %w", run.Name, err)
	}
	var out v1alpha1.UpgradeRun
	err = retry(ctx, func(attempt int) error {
		err := s.runs.Patch(types.JSONPatchType).Namespace(s.namespace).Resource(Resource).Name(run.Name).
			SubResource("status").Param("fieldManager", kube.FieldManager).Body(patch).Do(ctx).Into(&out)
		if !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
			return err // done, a blip to retry, or an answer
		}
		// A conflict, or a patch that no longer applies (the status
		// changed under it): did the run move since it was read? Or did
		// an earlier attempt of ours land and only its answer get lost?
		var cur v1alpha1.UpgradeRun
		if gerr := s.runs.Get().Namespace(s.namespace).Resource(Resource).Name(run.Name).Do(ctx).Into(&cur); gerr != nil {
			return gerr
		}
		if attempt > 1 {
			if st, serr := splitStatus(&cur.Status); serr == nil && st.equal(next) {
				out = cur
				return nil
			}
		}
		if cur.ResourceVersion != run.ResourceVersion {
			return fmt.Errorf("%w (read at version %s, stored at %s)", ErrConflict, run.ResourceVersion, cur.ResourceVersion)
		}
		return err
	})
	switch {
	case errors.Is(err, ErrConflict):
		return err
	case apierrors.IsConflict(err):
		return fmt.Errorf("%w (read at version %s)", ErrConflict, run.ResourceVersion)
	case noResource(err):
		return fmt.Errorf("run %s in %s: %w", run.Name, s.namespace, ErrNotFound)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("run %s in %s: %w", run.Name, s.namespace, ErrNotFound)
	case err != nil:
		return err
	}
	run.ResourceVersion, run.Generation = out.ResourceVersion, out.Generation
	s.written.remember(run.Name, out.ResourceVersion, next)
	return nil
}
