package runstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
)

// Save creates the run (empty ResourceVersion) or updates it with its
// ResourceVersion as precondition: if another process saved the run since
// it was read, Save returns an error wrapping ErrConflict and writes
// nothing. An update sends only the keys that changed since this Store
// last read or wrote the run at that version (the status and the stages a
// transition touched); otherwise every key. On success
// run.ResourceVersion is the new version.
func (s *Store) Save(ctx context.Context, run *v1alpha1.UpgradeRun) error {
	if run == nil || run.Name == "" {
		return errors.New("save run: the run has no name")
	}
	keys, err := encodeRun(run)
	if err != nil {
		return err
	}
	var rv string
	if run.ResourceVersion == "" {
		rv, err = s.create(ctx, run, keys)
	} else {
		rv, err = s.update(ctx, run, keys)
	}
	if err != nil {
		s.written.forget(run.Name)
		return fmt.Errorf("save run %s: %w", run.Name, err)
	}
	s.written.remember(run.Name, rv, keys)
	run.ResourceVersion = rv
	return nil
}

func (s *Store) create(ctx context.Context, run *v1alpha1.UpgradeRun, keys map[string][]byte) (string, error) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        SecretName(run.Name),
			Namespace:   s.namespace,
			Labels:      labelsFor(run.Name),
			Annotations: annotationsFor(run),
		},
		Type: SecretType,
		Data: keys,
	}
	var rv string
	err := retry(ctx, func(attempt int) error {
		created, err := s.cs.CoreV1().Secrets(s.namespace).Create(ctx, sec, metav1.CreateOptions{FieldManager: kube.FieldManager})
		if err == nil {
			rv = created.ResourceVersion
			return nil
		}
		if apierrors.IsAlreadyExists(err) && attempt > 1 {
			// An earlier attempt may have landed and only its answer
			// was lost: then the stored run is ours.
			cur, gerr := s.cs.CoreV1().Secrets(s.namespace).Get(ctx, sec.Name, metav1.GetOptions{})
			if gerr == nil && holds(cur, keys) {
				rv = runVersion(cur)
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
		return "", fmt.Errorf("%w: a run named %s is stored already", ErrConflict, run.Name)
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("namespace %s: %w", s.namespace, err)
	}
	return rv, err
}

func (s *Store) update(ctx context.Context, run *v1alpha1.UpgradeRun, keys map[string][]byte) (string, error) {
	precondition := run.ResourceVersion
	changed := s.written.changed(run.Name, precondition, keys)
	var rv string
	err := retry(ctx, func(attempt int) error {
		out, err := s.patchRun(ctx, run, changed, precondition)
		if err == nil {
			rv = out.ResourceVersion
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		// The Secret changed since the run was read. That is no conflict
		// if an earlier attempt of ours landed and only its answer was
		// lost, or if only a legacy record's sources changed after it.
		cur, gerr := s.cs.CoreV1().Secrets(s.namespace).Get(ctx, SecretName(run.Name), metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if attempt > 1 && holds(cur, keys) {
			rv = runVersion(cur)
			return nil
		}
		if runVersion(cur) != run.ResourceVersion || cur.ResourceVersion == precondition {
			return err
		}
		precondition = cur.ResourceVersion
		changed = withLegacyRemoved(keys, cur)
		out, err = s.patchRun(ctx, run, changed, precondition)
		if err == nil {
			rv = out.ResourceVersion
		}
		return err // a conflict now is a real race with another writer
	})
	switch {
	case apierrors.IsConflict(err):
		return "", fmt.Errorf("%w (read at version %s)", ErrConflict, run.ResourceVersion)
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("run %s in %s: %w", run.Name, s.namespace, ErrNotFound)
	}
	return rv, err
}

// holds reports whether sec stores exactly these keys' values.
func holds(sec *corev1.Secret, keys map[string][]byte) bool {
	for k, v := range keys {
		if !bytes.Equal(sec.Data[k], v) {
			return false
		}
	}
	return true
}

// withLegacyRemoved is every key, plus the removal of what a record of an
// earlier version, or a plan with more stages, left in sec.
func withLegacyRemoved(keys map[string][]byte, sec *corev1.Secret) map[string]any {
	out := map[string]any{}
	for k, v := range keys {
		out[k] = v
	}
	for k := range sec.Data {
		if _, ours := keys[k]; !ours && (k == KeyRun || strings.HasPrefix(k, stagePrefix)) {
			out[k] = nil
		}
	}
	return out
}

// patchRun writes the changed keys, labels and annotations with a JSON
// merge patch whose resourceVersion makes it conditional. A merge patch
// leaves the other keys alone: the plan is not sent again.
func (s *Store) patchRun(ctx context.Context, run *v1alpha1.UpgradeRun, changed map[string]any, resourceVersion string) (*corev1.Secret, error) {
	annotations := map[string]any{annotationRunVersion: nil} // the run is current again
	for k, v := range annotationsFor(run) {
		annotations[k] = v
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"resourceVersion": resourceVersion,
			"labels":          labelsFor(run.Name),
			"annotations":     annotations,
		},
		"data": changed,
	})
	if err != nil {
		return nil, err
	}
	return s.cs.CoreV1().Secrets(s.namespace).Patch(ctx, SecretName(run.Name), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: kube.FieldManager})
}
