package localcluster

import (
	"fmt"
	"regexp"

	"k8s.io/client-go/rest"
)

var userFileRE = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// UserKubeconfig mints a client certificate for user in groups and writes a
// kubeconfig for it. The user has no permissions until RBAC grants some; the
// API server's audit log records its requests under that name.
func (c *Cluster) UserKubeconfig(user string, groups ...string) (string, error) {
	if user == "" {
		return "", fmt.Errorf("user name is required")
	}
	ca, err := loadCA(c.layout.path("pki"))
	if err != nil {
		return "", err
	}
	kp, err := ca.client(user, groups)
	if err != nil {
		return "", err
	}
	path := c.layout.path("users", userFileRE.ReplaceAllString(user, "_")+".kubeconfig")
	if err := writeKubeconfig(path, "upshift-"+c.Name, c.Server, ca.certPEM, user, kp); err != nil {
		return "", err
	}
	return path, nil
}

// UserRESTConfig is UserKubeconfig loaded as a *rest.Config.
func (c *Cluster) UserRESTConfig(user string, groups ...string) (*rest.Config, error) {
	path, err := c.UserKubeconfig(user, groups...)
	if err != nil {
		return nil, err
	}
	return restConfigFromKubeconfig(path)
}
