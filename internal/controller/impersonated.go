package controller

import (
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// impersonatedClients are clients of the controller's config acting as a
// user (a fleet's ServiceAccount), one per user, reused: a client built
// per read costs its setup on every reconcile.
type impersonatedClients struct {
	config *rest.Config
	mu     sync.Mutex
	byUser map[string]kubernetes.Interface
}

func newImpersonatedClients(cfg *rest.Config) *impersonatedClients {
	return &impersonatedClients{config: cfg, byUser: map[string]kubernetes.Interface{}}
}

// as is the client acting as user.
func (c *impersonatedClients) as(user string) (kubernetes.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.byUser[user]; ok {
		return cs, nil
	}
	cs, err := kubernetes.NewForConfig(impersonating(c.config, user))
	if err != nil {
		return nil, err
	}
	c.byUser[user] = cs
	return cs, nil
}
