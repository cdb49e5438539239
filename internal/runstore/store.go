package runstore

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
)

// Sentinels for errors.Is.
var (
	// ErrNotFound: no run of that name is stored.
	ErrNotFound = errors.New("run not found")
	// ErrConflict: another process wrote the run since it was read (or
	// created a run of that name first). Read it again and decide.
	ErrConflict = errors.New("run changed since it was read")
)

// Store keeps runs as Secrets in one namespace. It is safe for concurrent
// use; it caches nothing, so every read sees what other processes wrote.
type Store struct {
	cs        kubernetes.Interface
	namespace string
	chunks    *chunks.Store // the runs' sources
	written   written       // what was last read or written, per run
}

// New returns a Store that keeps runs in namespace.
func New(cs kubernetes.Interface, namespace string) *Store {
	return &Store{cs: cs, namespace: namespace, chunks: chunks.New(cs, namespace, SourcesSecretType)}
}

// Namespace is where the runs are kept.
func (s *Store) Namespace() string { return s.namespace }

// EnsureNamespace creates the namespace if missing. It reads first, so a
// user allowed to write in the namespace but not to create namespaces is
// not refused when it exists.
func (s *Store) EnsureNamespace(ctx context.Context) error {
	err := retry(ctx, func(int) error {
		_, err := s.cs.CoreV1().Namespaces().Get(ctx, s.namespace, metav1.GetOptions{})
		if apierrors.IsForbidden(err) {
			// May not read namespaces: assume it exists; a missing one
			// shows as a clear error on the first write.
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}}}
		_, err = s.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("ensure namespace %s: %w", s.namespace, err)
	}
	return nil
}

// Get returns the run named name, or an error wrapping ErrNotFound. Its
// ResourceVersion is the Secret's resourceVersion at which the run was last
// saved: the precondition Save checks.
func (s *Store) Get(ctx context.Context, name string) (*v1alpha1.UpgradeRun, error) {
	sec, err := s.secret(ctx, name)
	if err != nil {
		return nil, err
	}
	run, err := decodeRun(sec, name)
	if err == nil {
		s.written.rememberRead(name, sec)
	}
	return run, err
}

// secret reads the run's Secret, retrying transient errors.
func (s *Store) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	var sec *corev1.Secret
	err := retry(ctx, func(int) error {
		var err error
		sec, err = s.cs.CoreV1().Secrets(s.namespace).Get(ctx, SecretName(name), metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("run %s in %s: %w", name, s.namespace, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", name, err)
	}
	return sec, nil
}

// Delete removes the run and its sources. A run that is not there is an
// error wrapping ErrNotFound, unless an earlier attempt of this call
// deleted it and only the answer was lost.
func (s *Store) Delete(ctx context.Context, name string) error {
	err := retry(ctx, func(attempt int) error {
		err := s.cs.CoreV1().Secrets(s.namespace).Delete(ctx, SecretName(name), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) && attempt > 1 {
			return nil
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("delete run %s in %s: %w", name, s.namespace, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete run %s: %w", name, err)
	}
	// The record first: chunks without a record are harmless leftovers
	// (the next delete of the name takes them), a record without its
	// sources is not.
	if err := s.chunks.DeleteAll(ctx, LabelRun+"="+labelValue(name)); err != nil {
		return fmt.Errorf("delete the sources of run %s: %w", name, err)
	}
	return nil
}
