// Package clients builds the Kubernetes and Helm clients a run shares:
// one discovery cache, one RESTMapper, one waiter and applier. Step kinds,
// gates and the runner take a *Set; none of them builds its own.
package clients

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/kube"
)

// Set is the clients every executor and gate of a run shares.
type Set struct {
	Dynamic dynamic.Interface
	// Metadata lists objects' metadata alone (a removed-API scan).
	Metadata metadata.Interface
	// Mapper is the run's one RESTMapper over its one discovery cache,
	// shared with Helm and the backups (Session.Open): each client that
	// built its own asked the API server for discovery again.
	Mapper    meta.ResettableRESTMapper
	Clientset kubernetes.Interface
	// CRDs reads CustomResourceDefinitions as protobuf (kube.NewCRDClient).
	CRDs    apiextensionsv1.CustomResourceDefinitionInterface
	Waiter  *kube.Waiter
	Applier *kube.Applier
	// Helm runs helm steps and the rollback of their releases.
	Helm *helmx.Client
	// Cache is the run's shared informers (WithCache); nil outside a run.
	Cache *kube.Cache
	// Egress bounds the requests the plan's gates and metrics make
	// (Options.Egress of the session).
	Egress egress.Policy
}

// New builds the clients from a REST config. The RESTMapper caches
// discovery and is reset when a kind is unknown, so kinds of CRDs that a
// step installs resolve in the steps after it.
func New(cfg *rest.Config) (*Set, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	hc, err := helmx.New(cfg, helmx.WithDiscovery(cached))
	if err != nil {
		return nil, err
	}
	crds, err := kube.NewCRDClient(cfg)
	if err != nil {
		return nil, err
	}
	w := kube.NewWaiter(dyn, mapper)
	w.Logs = kube.NewLogTail(cs)
	w.CRDs = crds
	w.Metadata = md
	return &Set{
		Helm:      hc,
		Dynamic:   dyn,
		Metadata:  md,
		Mapper:    mapper,
		Clientset: cs,
		CRDs:      crds,
		Waiter:    w,
		Applier:   kube.NewApplier(dyn, mapper),
	}, nil
}

// WithCache returns a copy of the set whose Waiter shares one informer
// cache among its waits (kube.Cache), and whose Applier tells that cache
// its answers of cluster-scoped objects, and the func that stops the
// cache: a run's set, closed when the run stops.
func (s *Set) WithCache() (*Set, func()) {
	c := kube.NewCache(s.Dynamic)
	cp := *s
	cp.Waiter = s.Waiter.WithCache(c)
	cp.Applier = s.Applier.WithCache(c)
	cp.Cache = c
	return &cp, c.Close
}

// WithAnswers returns a copy of the set whose Applier records its answers
// of namespaced objects in ans and whose waits fence on them
// (kube.Answers); nil: the waits list. The caller scopes ans to writes
// that all go through the Applier.
func (s *Set) WithAnswers(ans *kube.Answers) *Set {
	cp := *s
	if s.Waiter != nil {
		cp.Waiter = s.Waiter.WithAnswers(ans)
	}
	if s.Applier != nil {
		cp.Applier = s.Applier.WithAnswers(ans)
	}
	return &cp
}
