package controller

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// self is the controller's own standing, which no resource may borrow:
// the namespace where it keeps runs, backups and its leases, and the user
// it is to the API server. A resource in that namespace, or naming the
// controller's own ServiceAccount, would act with what only the
// controller should reach.
type self struct {
	namespace string
	// user is the controller's user name ("system:serviceaccount:…");
	// empty when the API server could not say (then only the namespace
	// is refused, and a plan could name the controller's ServiceAccount
	// only from the controller's namespace, which is refused).
	user string
}

// whoAmI asks the API server who the controller is (a SelfSubjectReview,
// which every authenticated user may create).
func whoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("ask the API server who the controller is (selfsubjectreviews): %w", err)
	}
	return r.Status.UserInfo.Username, nil
}

// refusal says why a resource of kind in namespace, acting as the
// ServiceAccount sa (set in field; empty: the default one), may not act;
// "" when it may.
func (s self) refusal(kind, namespace, sa, field string) string {
	if namespace == s.namespace {
		return fmt.Sprintf("metadata.namespace: %s is the controller's own namespace, where it keeps runs, backups and leases: create the %s in a namespace of its own", namespace, kind)
	}
	if sa != "" {
		if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
			return fmt.Sprintf("%s: %q is not a ServiceAccount name (%s): name a ServiceAccount of namespace %s", field, sa, strings.Join(errs, "; "), namespace)
		}
	}
	if s.user != "" && serviceAccountUser(namespace, sa) == s.user {
		return fmt.Sprintf("%s: %s is the controller's own ServiceAccount: name one of namespace %s with the rights the %s needs", field, s.user, namespace, kind)
	}
	return ""
}
