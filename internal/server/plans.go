package server

import (
	"errors"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// handlePlanPreview validates an uploaded plan, checks it against the
// cluster as apply would and previews every change; nothing is changed.
// The plan has no directory: its sources are inline, URLs, ConfigMaps or
// Secrets (as an UpgradePlan resource's).
func (s *Server) handlePlanPreview(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, badRequest("", "read the plan: %v", err))
		return
	}
	const name = "the uploaded plan"
	l, err := plan.Decode(name, body, "")
	var de *plan.DecodeError
	if errors.As(err, &de) {
		out := badRequest("", "%s is not a well-formed UpgradePlan", name)
		for _, p := range de.Problems {
			out.Errors = append(out.Errors, APIError{StatusCode: http.StatusBadRequest, Message: redact.Text(p)})
		}
		writeError(w, out)
		return
	}
	if err != nil {
		writeError(w, badRequest("", "%v", err))
		return
	}
	res := PlanPreviewResult{Plan: l.Plan.Name, Version: l.Plan.Spec.Version}
	invalid := func(errs field.ErrorList) {
		for _, e := range errs {
			res.Errors = append(res.Errors, APIError{StatusCode: http.StatusBadRequest, Field: e.Field, Message: redact.Text(e.ErrorBody())})
		}
		writeJSON(w, http.StatusBadRequest, res)
	}
	if errs := plan.ValidateInCluster(l.Plan); len(errs) > 0 {
		invalid(errs)
		return
	}
	p, err := s.resolve(r.Context(), name, l)
	if err != nil {
		writeError(w, badRequest("", "%v", err))
		return
	}
	sess, err := s.session()
	if err != nil {
		writeError(w, err)
		return
	}
	if errs := sess.Preflight(r.Context(), p); len(errs) > 0 {
		invalid(errs)
		return
	}
	pv, err := sess.Preview(r.Context(), p)
	if err != nil {
		writeError(w, err)
		return
	}
	res.Preview = redactPreview(pv)
	writeJSON(w, http.StatusOK, res)
}

// redactPreview passes a preview's diffs and notes through the one
// redaction function, as every printer does (a diff's Secret values are
// already hidden by the preview; this hides URL credentials and the like).
func redactPreview(p *runner.PlanPreview) *runner.PlanPreview {
	if p == nil {
		return nil
	}
	for i := range p.Stages {
		for j := range p.Stages[i].Steps {
			for k := range p.Stages[i].Steps[j].Changes {
				c := &p.Stages[i].Steps[j].Changes[k]
				c.Diff, c.Note = redact.Text(c.Diff), redact.Text(c.Note)
			}
		}
	}
	return p
}
