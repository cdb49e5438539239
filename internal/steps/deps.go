package steps

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/kube"
)

// Deps are the clients every executor shares.
type Deps struct {
	Dynamic   dynamic.Interface
	Mapper    meta.RESTMapper
	Clientset kubernetes.Interface
	Waiter    *kube.Waiter
	Applier   *kube.Applier
	// Helm runs helm steps and the rollback of their releases.
	Helm *helmx.Client
}

// NewDeps builds the clients from a REST config. The RESTMapper caches
// discovery and is reset when a kind is unknown, so kinds of CRDs that a
// step installs resolve in the steps after it.
func NewDeps(cfg *rest.Config) (*Deps, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	hc, err := helmx.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Deps{
		Helm:      hc,
		Dynamic:   dyn,
		Mapper:    mapper,
		Clientset: cs,
		Waiter:    kube.NewWaiter(dyn, mapper),
		Applier:   kube.NewApplier(dyn, mapper),
	}, nil
}
