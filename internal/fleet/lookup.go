package fleet

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// lookup asks the plugin which operation a call whose answer was lost
// started (intent.go), into the observation's Lookups.
func (r *reader) lookup(g *errgroup.Group, ctx context.Context, id string, op *v1alpha1.PluginOperation) {
	set := func(l Lookup) {
		r.mu.Lock()
		r.o.Lookups[id] = l
		r.mu.Unlock()
	}
	switch {
	case isMember(op.Action):
		// The controller's own: a member run started again resumes the
		// run it started, whose name the plan gives.
		set(Lookup{Again: true})
	case !r.caps.Find:
		set(Lookup{Unknown: "the plugin cannot look operations up by request id (it does not serve upshift.ops.v1 FindOperation)"})
	default:
		requestID := op.RequestID
		g.Go(func() error {
			found, err := r.p.Find(ctx, id, requestID)
			switch {
			case err == nil:
				set(Lookup{Op: found})
			case pluginsdk.IsNoSuchRequest(err):
				set(Lookup{Again: true})
			case errors.Is(err, ErrUnsupported):
				set(Lookup{Unknown: "the plugin cannot look operations up by request id: " + err.Error()})
			default:
				return r.answer(id, "FindOperation of request "+requestID, err)
			}
			return nil
		})
	}
}

// statusesNow reads every cluster's status from the plugin, none from
// the cache, and keeps them in the cache.
func (r *reader) statusesNow(ctx context.Context) error {
	if err := r.statuses(ctx, r.ids); err != nil {
		return err
	}
	r.o.AllStatuses, r.freshAll = true, true
	return nil
}
