package runstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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

// Store keeps runs as UpgradeRun resources in one namespace. It is safe
// for concurrent use; it caches nothing it reads, so every read sees what
// other processes wrote.
type Store struct {
	cs        kubernetes.Interface
	runs      rest.Interface // upshift.dev/v1alpha1
	crds      apiextensionsclient.Interface
	namespace string
	chunks    *chunks.Store // the runs' sources
	written   written       // what was last read or written, per run
	now       func() time.Time

	crdMu sync.Mutex
	crdOK bool // EnsureCRD found or made the CRD current
	// namespaceSeen: the namespace was found (EnsureNamespace, or a
	// caller that read it: NamespaceReady); EnsureNamespace asks no more.
	namespaceSeen atomic.Bool
}

// NamespaceReady tells the store that its namespace was read and exists
// (preflight reads it): EnsureNamespace then asks the API server nothing.
// A namespace deleted since fails the first write loudly.
func (s *Store) NamespaceReady() { s.namespaceSeen.Store(true) }

// New returns a Store that keeps runs in namespace of the cluster cfg
// points at.
func New(cfg *rest.Config, namespace string) (*Store, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	runs, err := runsClient(cfg)
	if err != nil {
		return nil, err
	}
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Store{cs: cs, runs: runs, crds: crds, namespace: namespace, now: time.Now,
		chunks: chunks.New(cs, namespace, SourcesSecretType)}, nil
}

// Namespace is where the runs are kept.
func (s *Store) Namespace() string { return s.namespace }

// EnsureNamespace creates the namespace if missing. It reads first, so a
// user allowed to write in the namespace but not to create namespaces is
// not refused when it exists.
func (s *Store) EnsureNamespace(ctx context.Context) error {
	if s.namespaceSeen.Load() {
		return nil
	}
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
	s.namespaceSeen.Store(true)
	return nil
}

// Get returns the run named name, or an error wrapping ErrNotFound. Its
// ResourceVersion is the precondition Save checks. Its spec.plan is the
// plan redacted (LoadSources has the plan as written), except for a
// record of an earlier version, which kept the plan as written.
func (s *Store) Get(ctx context.Context, name string) (*v1alpha1.UpgradeRun, error) {
	run, _, err := s.read(ctx, name)
	return run, err
}

// GetResource returns the run named name as an UpgradeRun, or an error
// wrapping ErrNotFound: unlike Get, it does not look for a record of an
// earlier version, and a run kept only as one is not found.
func (s *Store) GetResource(ctx context.Context, name string) (*v1alpha1.UpgradeRun, error) {
	var run v1alpha1.UpgradeRun
	err := retry(ctx, func(int) error {
		return s.runs.Get().Namespace(s.namespace).Resource(Resource).Name(name).Do(ctx).Into(&run)
	})
	switch {
	case apierrors.IsNotFound(err): // the run, or the resource itself
		return nil, fmt.Errorf("run %s in %s: %w", name, s.namespace, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("get run %s: %w", name, err)
	}
	s.rememberRead(&run)
	return fromResource(&run), nil
}

// read returns the run, and the Secret that keeps it when it is a record
// of an earlier version (nil for an UpgradeRun).
func (s *Store) read(ctx context.Context, name string) (*v1alpha1.UpgradeRun, *corev1.Secret, error) {
	run, err := s.GetResource(ctx, name)
	if !errors.Is(err, ErrNotFound) {
		return run, nil, err
	}
	sec, lerr := s.legacySecret(ctx, name)
	if lerr != nil {
		return nil, nil, lerr
	}
	if sec == nil {
		return nil, nil, fmt.Errorf("run %s in %s: %w", name, s.namespace, ErrNotFound)
	}
	legacy, err := decodeLegacy(sec, name)
	if err != nil {
		return nil, nil, err
	}
	s.written.forget(name)
	return legacy, sec, nil
}

// rememberRead records a read run's status as stored at its version; a
// run whose status was never written is not remembered, so its next save
// writes the whole status.
func (s *Store) rememberRead(run *v1alpha1.UpgradeRun) {
	if run.Status.Phase == "" {
		s.written.forget(run.Name)
		return
	}
	st, err := splitStatus(&run.Status)
	if err != nil {
		s.written.forget(run.Name)
		return
	}
	s.written.remember(run.Name, run.ResourceVersion, st)
}

// Delete removes the run (and a record of an earlier version) and its
// sources. A run that is not there is an error wrapping ErrNotFound,
// unless an earlier attempt of this call deleted it and only the answer
// was lost.
func (s *Store) Delete(ctx context.Context, name string) error {
	found := false
	err := retry(ctx, func(attempt int) error {
		err := s.runs.Delete().Namespace(s.namespace).Resource(Resource).Name(name).Do(ctx).Error()
		if err == nil || (apierrors.IsNotFound(err) && attempt > 1) {
			found = true
			return nil
		}
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete run %s: %w", name, err)
	}
	err = retry(ctx, func(attempt int) error {
		err := s.cs.CoreV1().Secrets(s.namespace).Delete(ctx, SecretName(name), metav1.DeleteOptions{})
		if err == nil || (apierrors.IsNotFound(err) && attempt > 1) {
			found = true
			return nil
		}
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete run %s: %w", name, err)
	}
	s.written.forget(name)
	if !found {
		return fmt.Errorf("delete run %s in %s: %w", name, s.namespace, ErrNotFound)
	}
	// The record first: chunks without a record are harmless leftovers
	// (the next delete of the name takes them), a record without its
	// sources is not.
	if err := s.chunks.DeleteAll(ctx, LabelRun+"="+labelValue(name)); err != nil {
		return fmt.Errorf("delete the sources of run %s: %w", name, err)
	}
	return nil
}

// Watch watches the run named name from resourceVersion ("": its state
// now, then its changes). The events carry *v1alpha1.UpgradeRun as the
// resource has it (spec.plan redacted).
func (s *Store) Watch(ctx context.Context, name, resourceVersion string) (watch.Interface, error) {
	opts := metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: resourceVersion,
		Watch:           true,
	}
	return s.runs.Get().Namespace(s.namespace).Resource(Resource).VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
}
