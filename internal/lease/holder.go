package lease

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Holder reads who holds the lease without taking it (for `upshift
// status`): the holder's identity, and whether the lease is still valid
// (renewTime + duration in the future). No Lease, or a released one, is a
// zero Identity and false.
func Holder(ctx context.Context, cs kubernetes.Interface, namespace, name string) (id Identity, valid bool, err error) {
	if name == "" {
		name = DefaultName
	}
	l, err := cs.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, fmt.Errorf("read lease %s/%s: %w", namespace, name, err)
	}
	sp := l.Spec
	if sp.HolderIdentity == nil || *sp.HolderIdentity == "" {
		return Identity{}, false, nil
	}
	valid = sp.RenewTime != nil && sp.LeaseDurationSeconds != nil &&
		sp.RenewTime.Add(time.Duration(*sp.LeaseDurationSeconds)*time.Second).After(time.Now())
	return parseHolder(*sp.HolderIdentity), valid, nil
}
