package installation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Reverter marks the attempt's Installation Failed in a rollback, as
// embedded-cluster marks a failed upgrade's: the record stays, and says
// so.
type Reverter struct {
	key, run string
	dyn      dynamic.Interface
}

var _ step.Reverter = (*Reverter)(nil)

// NewReverter builds the Reverter of attempt's installation steps.
func NewReverter(attempt step.RunAttempt, dyn dynamic.Interface) *Reverter {
	return &Reverter{key: key(attempt), run: attempt.Run, dyn: dyn}
}

// Revert marks it Failed; with none created, there is nothing to mark.
func (r *Reverter) Revert(ctx context.Context, _ *v1alpha1.BackupRef) (step.Reverted, error) {
	list, err := r.dyn.Resource(GVR).List(ctx, metav1.ListOptions{LabelSelector: KeyLabel + "=" + r.key})
	if err != nil {
		return step.Reverted{}, fmt.Errorf("list Installations: %w", err)
	}
	if len(list.Items) == 0 {
		return step.Reverted{Result: step.Success("installation: no Installation recorded")}, nil
	}
	in := &list.Items[0]
	reason := fmt.Sprintf("the upgrade failed and was rolled back (Upshift run %s)", r.run)
	if err := setState(ctx, r.dyn, in, Failed, reason); err != nil {
		return step.Reverted{}, err
	}
	return step.Reverted{Result: step.Success("Installation %s marked Failed", in.GetName())}, nil
}
