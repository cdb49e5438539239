package step

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// What a driver gives the kinds that depend on the run itself rather
// than on the cluster: where runs are kept (a freeze), and the run
// record's approvals (an approval step).

// Runs is where Upshift keeps its run records, and the client of who
// writes there (the driver, not the plan's identity): a freeze leaves
// that namespace alone and proves itself there.
type Runs struct {
	Namespace string
	Client    kubernetes.Interface
}

// Approvals reads the approval of a step from the run record: nil when
// nobody approved it yet.
type Approvals func(ctx context.Context, step string) (*v1alpha1.Approval, error)

// Await waits until the run record holds an approval of a step, and
// returns it; ErrCannotAwait when it cannot (the step then asks
// Approvals every Poll).
type Await func(ctx context.Context, step string) (*v1alpha1.Approval, error)

// ErrCannotAwait: Await cannot follow the run record (its user may not
// watch runs).
var ErrCannotAwait = errors.New("cannot follow the run record")

// Waits is how approval and pause steps read and wait.
type Waits struct {
	Approvals Approvals
	// Await, if set, is how an approval is waited for once Approvals
	// found none.
	Await Await
	// Poll is how often Approvals is asked when there is no Await.
	Poll time.Duration
	// NoWait makes a step that would wait return ErrWaiting at once.
	NoWait bool
}
