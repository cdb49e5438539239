package backup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// FieldManager names Upshift's restore writes in managedFields.
const FieldManager = kube.RestoreFieldManager

// apiBackoff spaces the retries of a transient API error. kube.Retry ends
// it where the next step would pass Cap: five tries, about 3s in all.
var apiBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 7, Cap: 5 * time.Second}

// Client takes, saves, loads and restores backups. It is safe for
// concurrent use.
type Client struct {
	namespace string
	secrets   kubernetes.Interface // backup Secrets and their namespace
	metadata  metadata.Interface   // lists backup Secrets without their data
	objMeta   metadata.Interface   // the objects stages touch, metadata alone (Unmoved)
	dyn       dynamic.Interface    // the objects stages touch, of any kind
	jsonReads rest.Interface       // the same, read as the API server's JSON
	mapper    meta.ResettableRESTMapper
	waiter    *kube.Waiter
	backoff   wait.Backoff
	// namespaceSeen: the namespace was found or created once; later
	// Saves do not ask again.
	namespaceSeen atomic.Bool

	// AfterChunkWritten, when set, is called after each chunk Secret is
	// written and before the backup is read back: the test failpoint that
	// kills a process in the middle of a backup hooks in here.
	AfterChunkWritten func(key Key, index int)
	// BeforeVerify, when set, is called by Restore after its writes and
	// before it reads the objects back to verify them: tests change
	// objects there as another controller would in between.
	BeforeVerify func()
}

// New builds a Client whose backup Secrets live in namespace (created on
// the first Save if missing).
func New(cfg *rest.Config, namespace string) (*Client, error) {
	return NewSplit(cfg, cfg, namespace, nil)
}

// NewSplit builds a Client that keeps backup Secrets with store's
// credentials and reads and restores the backed-up objects with target's:
// a controller keeps backups with its own rights while a plan's objects
// are read as the plan's ServiceAccount.
//
// mapper resolves kinds for target (nil: one of its own over its own
// discovery cache); a run passes its clients' so discovery is asked once.
func NewSplit(store, target *rest.Config, namespace string, mapper meta.ResettableRESTMapper) (*Client, error) {
	if namespace == "" {
		return nil, errors.New("backup namespace is required")
	}
	cs, err := kubernetes.NewForConfig(store)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	md, err := metadata.NewForConfig(store)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(target)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	if mapper == nil {
		dc, err := discovery.NewDiscoveryClientForConfig(target)
		if err != nil {
			return nil, fmt.Errorf("discovery client: %w", err)
		}
		mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	}
	objMeta, err := metadata.NewForConfig(target)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	raw, err := jsonClient(target)
	if err != nil {
		return nil, err
	}
	return &Client{
		namespace: namespace,
		secrets:   cs,
		metadata:  md,
		objMeta:   objMeta,
		dyn:       dyn,
		jsonReads: raw,
		mapper:    mapper,
		waiter:    kube.NewWaiter(dyn, mapper),
		backoff:   apiBackoff,
	}, nil
}

// Namespace is where the backup Secrets live.
func (c *Client) Namespace() string { return c.namespace }

// mapping resolves a kind. An unknown kind resets the mapper (the stage may
// have installed its CRD since discovery was cached) and is tried once more.
func (c *Client) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve kind %s: %w", gvk, err)
	}
	return m, nil
}

// resource is the dynamic client for ref's object; a cluster-scoped kind
// ignores ref's namespace.
func (c *Client) resource(ref step.Ref) (dynamic.ResourceInterface, error) {
	gvr, ns, err := c.located(ref)
	if err != nil {
		return nil, err
	}
	if ns == "" {
		return c.dyn.Resource(gvr), nil
	}
	return c.dyn.Resource(gvr).Namespace(ns), nil
}

// located is the resource and namespace of ref's object: no namespace
// for a cluster-scoped kind.
func (c *Client) located(ref step.Ref) (schema.GroupVersionResource, string, error) {
	m, err := c.mapping(ref.GroupVersionKind())
	if err != nil {
		return schema.GroupVersionResource{}, "", err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return m.Resource, "", nil
	}
	if ref.Namespace == "" {
		return schema.GroupVersionResource{}, "", permanent{fmt.Errorf("%s is namespaced: namespace is required", ref.Kind)}
	}
	return m.Resource, ref.Namespace, nil
}

// permanent marks an error found before any request that no retry cures.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// retry runs call until it succeeds, returns an error no retry can cure
// (see retriable), the backoff is spent or ctx ends (see kube.Retry); it
// returns the last error, so a caller can still tell NotFound or Conflict.
func (c *Client) retry(ctx context.Context, call func() error) error {
	return c.retryIf(ctx, retriable, call)
}

func (c *Client) retryIf(ctx context.Context, again func(error) bool, call func() error) error {
	return kube.Retry(ctx, c.backoff, again, func(int) error { return call() })
}

// retriable tells errors worth another try. NotFound, AlreadyExists and
// Conflict are answers the caller acts on; bad credentials, missing RBAC and
// malformed requests no retry cures (kube.Transient); a kind the API does
// not serve is an answer too. Everything else (connection refused, 5xx,
// throttling, timeouts) is retried: a blip must not fail a backup.
func retriable(err error) bool {
	var p permanent
	switch {
	case errors.As(err, &p), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err), apierrors.IsConflict(err), meta.IsNoMatchError(err):
		return false
	}
	return kube.Transient(err)
}

// retriableOrNoMatch also retries a kind not served yet: while restoring,
// a CRD put back a moment ago takes a moment to be served.
func retriableOrNoMatch(err error) bool {
	return meta.IsNoMatchError(err) || retriable(err)
}

// jsonClient reads any object at its path as JSON, with target's
// credentials and no timeout of its own (the dynamic client has none; a
// slow read is retried, not cut off).
func jsonClient(target *rest.Config) (rest.Interface, error) {
	cfg := rest.CopyConfig(target)
	cfg.GroupVersion, cfg.APIPath = nil, ""
	cfg.AcceptContentTypes, cfg.ContentType = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("REST client: %w", err)
	}
	return c, nil
}
