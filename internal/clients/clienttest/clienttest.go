// Package clienttest helps the tests of step kinds, gates and backups that run against
// the real local cluster (internal/localcluster/testenv): shared clients,
// a namespace per test, objects written as YAML.
package clienttest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/source"
)

// Env is one test's view of the cluster.
type Env struct {
	*clients.Set
	// NS is a namespace of the test's own, deleted after it.
	NS string
}

// New connects to the package's cluster (skipping under -short) and creates
// a namespace named after the test. Its clients are a run's: the waits
// share one informer cache, closed after the test.
func New(t *testing.T) *Env {
	t.Helper()
	c := testenv.Cluster(t)
	d, err := clients.New(c.RESTConfig())
	if err != nil {
		t.Fatalf("clients.New: %v", err)
	}
	// As a run has them: the waits share one informer cache.
	d, closeCache := d.WithCache()
	t.Cleanup(closeCache)
	e := &Env{Set: d}
	e.NS = e.Namespace(t)
	return e
}

// Namespace creates one more namespace for the test.
func (e *Env) Namespace(t *testing.T) string {
	t.Helper()
	name := Name(t)
	_, err := e.Clientset.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	e.Cleanup(t, func(ctx context.Context) error {
		return e.Clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}

// Cleanup runs del after the test; NotFound is fine.
func (e *Env) Cleanup(t *testing.T, del func(context.Context) error) {
	t.Cleanup(func() {
		if err := del(context.Background()); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// Name is a DNS label unique to the test: its name, shortened, plus a
// random suffix.
func Name(t *testing.T) string {
	n := strings.ToLower(t.Name())
	n = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, n)
	if len(n) > 40 {
		n = n[len(n)-40:]
	}
	return strings.Trim(n, "-") + "-" + rand.String(5)
}

// Objects decodes a YAML stream written in the test, as a plan's source
// would be.
func Objects(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := source.Decode([]byte(y))
	if err != nil {
		t.Fatalf("decode test objects: %v", err)
	}
	return objs
}
