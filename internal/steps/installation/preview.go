package installation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview says which Installation the step records its state in: the
// attempt's, or a new one it creates.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	list, err := e.dyn.Resource(GVR).List(ctx, metav1.ListOptions{LabelSelector: KeyLabel + "=" + e.key})
	if err != nil {
		return nil, err
	}
	ref := step.Ref{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind}
	if len(list.Items) > 0 {
		ref.Name = list.Items[0].GetName()
		return []step.Change{{Ref: ref, Action: step.Update, Note: "status.state " + stateText(e.spec.State, e.spec.Reason)}}, nil
	}
	ref.Name = "<the time it is created>"
	return []step.Change{{Ref: ref, Action: step.Create, Note: fmt.Sprintf("a new Installation, its spec the newest one's with the step's merged over it; status.state %s", stateText(e.spec.State, e.spec.Reason))}}, nil
}
