package helmx

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restClientGetter is a genericclioptions.RESTClientGetter over an in-memory
// rest.Config, bound to one namespace. Helm's kube client takes its default
// namespace from ToRawKubeConfigLoader().Namespace(), so the getter must know it.
// The discovery cache and REST mapper are shared by every getter of a Client.
type restClientGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

var _ genericclioptions.RESTClientGetter = (*restClientGetter)(nil)

func (g *restClientGetter) ToRESTConfig() (*rest.Config, error) {
	return rest.CopyConfig(g.config), nil
}

func (g *restClientGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restClientGetter) ToRESTMapper() (meta.RESTMapper, error) {
	return g.mapper, nil
}

func (g *restClientGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return &namespacedClientConfig{config: g.config, namespace: g.namespace}
}

// namespacedClientConfig answers the few questions kubectl's factory asks of a
// kubeconfig loader: the rest.Config and the default namespace. There is no
// kubeconfig file behind it, so RawConfig is empty.
type namespacedClientConfig struct {
	config    *rest.Config
	namespace string
}

var _ clientcmd.ClientConfig = (*namespacedClientConfig)(nil)

func (c *namespacedClientConfig) RawConfig() (clientcmdapi.Config, error) {
	return *clientcmdapi.NewConfig(), nil
}

func (c *namespacedClientConfig) ClientConfig() (*rest.Config, error) {
	return rest.CopyConfig(c.config), nil
}

func (c *namespacedClientConfig) Namespace() (string, bool, error) {
	return c.namespace, true, nil
}

func (c *namespacedClientConfig) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultPathOptions()
}
