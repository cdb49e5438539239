package recreate

import (
	"context"
	"sort"
	"time"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/preview"
	"github.com/upshift-dev/upshift/internal/step"
)

var _ step.Previewer = (*Executor)(nil)

// Preview lists the objects that match now, each to be re-created (or
// annotated), and dry-runs the `from` manifests.
func (e *Executor) Preview(ctx context.Context) ([]step.Change, error) {
	f, err := e.find(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	from := e.fromKeys()
	var out []step.Change
	for _, ns := range f.namespaces {
		for _, o := range f.old[ns] {
			c := step.Change{Ref: kube.RefOf(o), Action: step.Recreate}
			switch {
			case e.spec.Mode == "annotate":
				c.Action, c.Note = step.Update, "annotated "+Annotation+": its operator re-creates it"
			case from[key(o.GetNamespace(), o.GetName())]:
				c.Note = "deleted, then re-applied from the step's manifests"
			case controller(o) != nil:
				c.Note = "deleted; its " + controller(o).Kind + " re-creates it"
			default:
				c.Note = "deleted, and nothing re-creates it: the step will refuse"
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.String() < out[j].Ref.String() })
	applied, err := preview.Apply(ctx, e.Applier, e.from)
	if err != nil {
		return nil, err
	}
	for _, c := range applied {
		if !hasRef(out, c.Ref) {
			out = append(out, c)
		}
	}
	return out, nil
}

func hasRef(cs []step.Change, r step.Ref) bool {
	for _, c := range cs {
		if c.Ref == r {
			return true
		}
	}
	return false
}
