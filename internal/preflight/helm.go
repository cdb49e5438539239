package preflight

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
)

// helm checks a helm step: the chart renders against the cluster, its
// namespace exists (or the step creates it), the CRDs it renders drop no
// version their live copies store, and the credentials may keep the
// release's records (Secrets in its namespace) and write every object the
// chart renders.
func (pf *preflight) helm(ctx context.Context, p *field.Path, stage, i int, h *v1alpha1.HelmStep) {
	what := fmt.Sprintf("%s (release %s/%s)", p, h.Namespace, h.Release)
	err := pf.namespaceErr(ctx, h.Namespace)
	switch {
	case apierrors.IsNotFound(err) && !pf.namespaces[h.Namespace]:
		if !h.CreateNamespace {
			pf.errs = append(pf.errs, field.NotFound(p.Child("namespace"), h.Namespace+": create it in an earlier step, or set createNamespace: true"))
			return
		}
		pf.need("create", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", what)
	case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
		pf.errs = append(pf.errs, field.InternalError(p.Child("namespace"), fmt.Errorf("get namespace %s: %w", h.Namespace, err)))
		return
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for _, verb := range []string{"get", "list", "create", "update", "delete"} {
		pf.need(verb, secrets, h.Namespace, what+": the release's records")
	}
	ex, err := pf.d.Executor(stage, i)
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p.Child("chart"), redact.Chart(h.Chart), err.Error()))
		return
	}
	// The executor's errors are scrubbed of the step's values already.
	rd, ok := ex.(step.Renderer)
	if !ok {
		pf.errs = append(pf.errs, field.InternalError(p, fmt.Errorf("the executor of a helm step (%T) cannot render", ex)))
		return
	}
	refs, rendered, err := rd.Rendered(ctx)
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p.Child("chart"), redact.Chart(h.Chart), "does not render: "+pf.removedInMessage(err.Error())))
		return
	}
	for _, o := range rendered {
		if isCRD(o) {
			pf.storedVersions(p.Child("chart"), o)
		}
	}
	for _, r := range refs {
		gvk := r.GroupVersionKind()
		gvr, _, ok := pf.resource(ctx, p.Child("chart"), gvk)
		if !ok {
			continue
		}
		obj := fmt.Sprintf("%s (%s)", what, r)
		for _, verb := range []string{"get", "list", "watch", "create", "patch", "update", "delete"} {
			pf.need(verb, gvr, r.Namespace, obj)
		}
		pf.workloadReads(gvk, r.Namespace, obj)
	}
}

// helmUninstall checks a helmUninstall step: the credentials may keep
// the release's records (its Secrets, marked uninstalled; a rollback
// writes a new one) and do to every object of its latest revision what
// the uninstall and its rollback do (read, wait, delete, create again),
// as a helm step's. The release's own refusals (a pending or failed
// revision, CRDs it would delete) come from the step's Targets.
func (pf *preflight) helmUninstall(ctx context.Context, p *field.Path, stage, i int, u *v1alpha1.HelmUninstallStep) {
	what := fmt.Sprintf("%s (release %s/%s)", p, u.Namespace, u.Release)
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for _, verb := range []string{"get", "list", "create", "update"} {
		pf.need(verb, secrets, u.Namespace, what+": the release's records")
	}
	ex, err := pf.d.Executor(stage, i)
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p, u.Release, err.Error()))
		return
	}
	refs, err := ex.Targets(ctx)
	if apierrors.IsForbidden(err) {
		return // the reads above name what is missing
	}
	if err != nil {
		pf.errs = append(pf.errs, field.Invalid(p.Child("release"), u.Release, err.Error()))
		return
	}
	for _, r := range refs {
		if gvr, _, ok := pf.resource(ctx, p.Child("release"), r.GroupVersionKind()); ok {
			for _, verb := range []string{"get", "list", "watch", "create", "patch", "update", "delete"} {
				pf.need(verb, gvr, r.Namespace, fmt.Sprintf("%s (%s)", what, r))
			}
		}
	}
}
