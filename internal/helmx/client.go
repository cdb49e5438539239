package helmx

import (
	"errors"
	"fmt"
	"log/slog"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// StorageDriver is where release records are kept: Secrets in the release's
// namespace, as the helm CLI does by default.
const StorageDriver = "secret"

// Client runs Helm operations against one cluster. Make one with New or
// NewFromKubeconfig; it is safe for concurrent use.
type Client struct {
	config    *rest.Config
	log       *slog.Logger
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper // resettable: Helm resets it after installing CRDs
}

// Option configures a Client.
type Option func(*Client)

// WithLogger sends the Client's log (and Helm's debug log, redacted, at Debug
// level) to l. Without it nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithDiscovery makes the Client share a discovery cache (a run's, so
// its Helm steps do not ask the API server for discovery again). The
// cache must be for the same cluster and credentials as New's config.
func WithDiscovery(d discovery.CachedDiscoveryInterface) Option {
	return func(c *Client) { c.discovery = d }
}

// New returns a Client for the cluster cfg points at. cfg is copied; when it
// sets no rate limit, the copy allows 50 requests per second (burst 100)
// instead of client-go's 5, as kubectl does for discovery-heavy work.
func New(cfg *rest.Config, opts ...Option) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("helmx: nil rest.Config")
	}
	c := &Client{config: rest.CopyConfig(cfg), log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(c)
	}
	if c.config.QPS == 0 && c.config.RateLimiter == nil {
		c.config.QPS, c.config.Burst = 50, 100
	}
	if c.config.WarningHandler == nil && c.config.WarningHandlerWithContext == nil {
		c.config.WarningHandler = warningLogger{c.log}
	}
	if c.discovery == nil {
		dc, err := discovery.NewDiscoveryClientForConfig(c.config)
		if err != nil {
			return nil, fmt.Errorf("helmx: discovery client: %w", err)
		}
		c.discovery = memory.NewMemCacheClient(dc)
	}
	c.mapper = restmapper.NewShortcutExpander(
		restmapper.NewDeferredDiscoveryRESTMapper(c.discovery), c.discovery, nil)
	return c, nil
}

// NewFromKubeconfig returns a Client from a kubeconfig file and context, with
// kubectl's rules: an empty path means $KUBECONFIG or ~/.kube/config, an
// empty context means the file's current context.
func NewFromKubeconfig(path, context string, opts ...Option) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("helmx: load kubeconfig %q: %w", path, err)
	}
	return New(cfg, opts...)
}

// ActionConfig returns a Helm action.Configuration for namespace: the
// Secrets storage driver in that namespace, a kube client whose default
// namespace it is, and the redacting debug log. Use it to run Helm actions
// this package does not wrap (template, get values, …). Each call returns a
// new Configuration; one Configuration should serve one operation at a time.
func (c *Client) ActionConfig(namespace string) (*action.Configuration, error) {
	if namespace == "" {
		return nil, errors.New("helmx: empty namespace")
	}
	return c.actionConfig(namespace)
}

// actionConfig is ActionConfig; namespace "" reads releases in every
// namespace (Helm's --all-namespaces), for listing only.
func (c *Client) actionConfig(namespace string) (*action.Configuration, error) {
	getter := &restClientGetter{
		config:    c.config,
		namespace: namespace,
		discovery: c.discovery,
		mapper:    c.mapper,
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(getter, namespace, StorageDriver, helmLog(c.log, namespace)); err != nil {
		return nil, fmt.Errorf("helmx: init Helm for namespace %s: %w", namespace, err)
	}
	if kc, ok := cfg.KubeClient.(*kube.Client); ok {
		kc.Namespace = namespace
	}
	return cfg, nil
}
