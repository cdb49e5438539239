package lease

import (
	"bytes"
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Observation is the lease as read before it is taken, for Held.TakenFrom.
type Observation struct {
	raw  []byte // the record as client-go's lock reads it
	free bool   // there, and released
}

// Free tells whether the lease was there and held by nobody.
func (o Observation) Free() bool { return o.free }

// Observe reads the lease without taking it. A lease that is not there
// is a zero Observation, not an error.
func Observe(ctx context.Context, cs kubernetes.Interface, namespace, name string) (Observation, error) {
	if name == "" {
		name = DefaultName
	}
	lock := &rl.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Client: cs.CoordinationV1()}
	rec, raw, err := lock.Get(ctx)
	if apierrors.IsNotFound(err) {
		return Observation{}, nil
	}
	if err != nil {
		return Observation{}, err
	}
	return Observation{raw: raw, free: rec.HolderIdentity == ""}, nil
}

// TakenFrom tells whether this process took the lease straight from o, a
// released lease: the record its take replaced is o's. Nobody held the
// lease in between: every take by another holder counts one more leader
// transition in the record (the acquire and renew times are not enough,
// the record holds them to the second), so no process of Upshift changed
// the platform between o and the take. Others may have: a read made
// after o is checked again under the lease before it is trusted.
func (h *Held) TakenFrom(o Observation) bool {
	from := h.lock.takenFrom()
	return o.free && from != nil && bytes.Equal(from, o.raw)
}
