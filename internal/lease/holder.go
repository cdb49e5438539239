package lease

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Holder reads who holds the lease without taking it (for `upshift
// status`): the holder's identity, and whether the lease is still valid.
// No Lease, or a released one, is a zero Identity and false.
//
// Validity is judged by the API server's clock alone, never by comparing
// the holder's clock with ours: the holder's renewTime is written by its
// own clock, which may run ahead or behind. What the server knows is when
// it stored the last renewal (the time of the managedFields entry that
// owns spec.renewTime) and what time it is (the Date of its answer). Both
// have whole seconds, so a lease counts as valid until more than its
// duration has passed between them: up to duration + 1 s after the last
// renewal, never less than the duration.
func Holder(ctx context.Context, cs kubernetes.Interface, namespace, name string) (id Identity, valid bool, err error) {
	if name == "" {
		name = DefaultName
	}
	// The clock first: a renewal stored after it only makes the lease look
	// fresher, never older than it is.
	now, err := serverNow(ctx, cs)
	if err != nil {
		return Identity{}, false, fmt.Errorf("read lease %s/%s: %w", namespace, name, err)
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
	return parseHolder(*sp.HolderIdentity), validAt(l, now), nil
}

// validAt tells whether l is valid at the server time now.
func validAt(l *coordinationv1.Lease, now time.Time) bool {
	sp := l.Spec
	if sp.RenewTime == nil || sp.LeaseDurationSeconds == nil {
		return false
	}
	renewed, ok := renewedAt(l)
	if !ok {
		// No server record of the renewal (someone stripped the managed
		// fields): the holder's renewTime is all there is, still compared
		// with the server's clock rather than ours.
		renewed = sp.RenewTime.Time
	}
	passed := now.Truncate(time.Second).Sub(renewed.Truncate(time.Second))
	return passed <= time.Duration(*sp.LeaseDurationSeconds)*time.Second
}
