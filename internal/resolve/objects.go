package resolve

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/source"
)

// clusterObjects reads the ConfigMaps and Secrets of configMap, secret and
// valuesFrom sources with a client of the credentials the plan acts with.
type clusterObjects struct {
	cs  kubernetes.Interface
	who string // those credentials, in messages
}

var _ source.Objects = (*clusterObjects)(nil)

// NewObjects reads ConfigMaps and Secrets with cfg (the CLI's kubeconfig).
func NewObjects(cfg *rest.Config) (source.Objects, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clusterObjects{cs: cs, who: whoIs(cfg)}, nil
}

// ClusterObjects reads ConfigMaps and Secrets with cs, a client of cfg's
// credentials (a driver's impersonated ServiceAccount), which messages
// name.
func ClusterObjects(cs kubernetes.Interface, cfg *rest.Config) source.Objects {
	return &clusterObjects{cs: cs, who: whoIs(cfg)}
}

func (o *clusterObjects) ConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	cm, err := o.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	return cm, o.explain(err, "configmaps", ns)
}

func (o *clusterObjects) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s, err := o.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	return s, o.explain(err, "secrets", ns)
}

// explain words a refusal as who may not do what, and the fix.
func (o *clusterObjects) explain(err error, resource, ns string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	return &forbiddenError{err: err, msg: fmt.Sprintf("%s may not get %s in namespace %s: grant get on %s in %s (a Role and a RoleBinding), or keep the content elsewhere", o.who, resource, ns, resource, ns)}
}

// forbiddenError is the API server's Forbidden (apierrors.IsForbidden
// holds) with a message that says whom to grant what.
type forbiddenError struct {
	err error
	msg string
}

func (e *forbiddenError) Error() string { return e.msg }
func (e *forbiddenError) Unwrap() error { return e.err }

// whoIs names the credentials of cfg: an impersonated ServiceAccount or
// user, else "these credentials" (a kubeconfig's user, who knows).
func whoIs(cfg *rest.Config) string {
	u := cfg.Impersonate.UserName
	if rest, ok := strings.CutPrefix(u, "system:serviceaccount:"); ok {
		if ns, name, ok := strings.Cut(rest, ":"); ok {
			return "ServiceAccount " + ns + "/" + name
		}
	}
	if u != "" {
		return "user " + u
	}
	return "these credentials"
}
