package preflight

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/step"
)

// rendered checks a step of a kind that says itself what it writes
// (step.Renderer), what else it reads (step.Reader) and what other rights
// it needs (step.Accessor): the kinds served, and the credentials allowed
// to write and read them. A kind that says none is not checked here.
func (pf *preflight) rendered(ctx context.Context, p *field.Path, stage, i int) {
	ex, err := pf.d.Executor(stage, i)
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p, "", err.Error()))
		return
	}
	if rd, ok := ex.(step.Reader); ok {
		for _, gvr := range rd.Reads() {
			for _, verb := range []string{"get", "list", "watch"} {
				pf.need(verb, gvr, "", fmt.Sprintf("%s (reads %s)", p, gvr.Resource))
			}
		}
	}
	if ac, ok := ex.(step.Accessor); ok {
		pf.accessor(ctx, p, ac.Access())
	}
	r, ok := ex.(step.Renderer)
	if !ok {
		return
	}
	_, objs, err := r.Rendered(ctx)
	if apierrors.IsForbidden(err) {
		return // the reads above name what is missing
	}
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p, "", "cannot say what it writes: "+err.Error()))
		return
	}
	pf.objects(ctx, p, objs)
}

// accessor checks each right a step says it needs, on a kind the cluster
// serves.
func (pf *preflight) accessor(ctx context.Context, p *field.Path, needs []step.Access) {
	served := map[schema.GroupVersionKind]bool{}
	for _, a := range needs {
		ok, asked := served[a.Kind]
		var gvr schema.GroupVersionResource
		if !asked || ok {
			// A kind not served is reported once, not once per right.
			gvr, _, ok = pf.resource(ctx, p, a.Kind)
			served[a.Kind] = ok
		}
		if !ok {
			continue
		}
		if a.Subresource != "" {
			gvr.Resource += "/" + a.Subresource
		}
		pf.need(a.Verb, gvr, a.Namespace, fmt.Sprintf("%s (%s %s)", p, a.Verb, gvr.Resource))
	}
}
