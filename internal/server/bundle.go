package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/supportbundle"
)

// bundleTimeout bounds the collection at the end of an infrastructure
// upgrade: the phase's end waits for it. A server that stops meanwhile
// stops collecting (its Error says so) and records the end, so the next
// one does not drive the phase again.
const bundleTimeout = 90 * time.Second

// infraBundlePath is where the infrastructure upgrade's bundle is
// downloaded.
const infraBundlePath = "/api/linux/upgrade/infra/support-bundle"

// SupportBundle is the support bundle collected when the infrastructure
// upgrade ended (Upshift's; embedded-cluster collects a host support
// bundle as its upgrade's last step). A bundle that could not be kept
// has an Error and no URL.
type SupportBundle struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	Bytes     int       `json:"bytes"`
	Files     int       `json:"files"`
	Missing   []string  `json:"missing,omitempty"`
	Error     string    `json:"error,omitempty"`
	// URL downloads it (an admin's token).
	URL string `json:"url,omitempty"`
}

// bundleOf is a kept bundle as the infra status lists it.
func bundleOf(s *supportbundle.Saved) *SupportBundle {
	if s == nil {
		return nil
	}
	out := &SupportBundle{Name: s.Name, CreatedAt: s.CreatedAt, Bytes: s.Bytes, Files: s.Files, Missing: s.Missing, Error: s.Error}
	if s.Ref != nil {
		out.URL = infraBundlePath
	}
	return out
}

// infraBundle collects the support bundle of an infrastructure upgrade
// that ended, succeeded or failed, as embedded-cluster does at the end
// of its upgrade: the hops' runs and reports, the events, objects and
// logs of their namespaces and the runs namespace, the nodes; kept in
// the runs namespace (one at a time). Best effort: what went wrong is in
// its Error, and the phase ends all the same.
func (s *Server) infraBundle(rec *record) *supportbundle.Saved {
	s.bundling.Store(true)
	defer s.bundling.Store(false)
	ctx, cancel := context.WithTimeout(s.ctx, bundleTimeout)
	defer cancel()
	var runs []*v1alpha1.UpgradeRun
	var namespaces []string
	sess, err := s.session()
	for _, p := range rec.Infra {
		r := s.runs.get(s.cfg.Session.Namespace, p.Run)
		if r == nil {
			continue
		}
		runs = append(runs, r)
		if err == nil {
			namespaces = append(namespaces, supportbundle.SourceNamespaces(ctx, sess.Store(), r)...)
		}
	}
	saved := supportbundle.Save(ctx, s.deps.Clientset, s.cfg.Session.Namespace, "upshift-support-infra-"+rec.Request.TargetVersion,
		supportbundle.Options{Runs: runs, RunsNamespace: s.cfg.Session.Namespace, Namespaces: namespaces})
	if s.ctx.Err() != nil {
		saved.Error = "the server stopped while collecting it: collect one with GET /api/runs/{name}/support-bundle or upshift support-bundle"
	}
	if saved.Error != "" {
		s.cfg.Log("support bundle of the infrastructure upgrade: " + saved.Error)
	}
	return &saved
}

// handleInfraBundle streams the infrastructure upgrade's kept bundle.
func (s *Server) handleInfraBundle(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	b := rec.SupportBundle
	if b == nil || b.Ref == nil {
		msg := "no support bundle: one is collected when an infrastructure upgrade ends; collect one now with GET /api/runs/{name}/support-bundle"
		if b != nil {
			msg = "the infrastructure upgrade's support bundle was not kept: " + b.Error
		}
		writeError(w, &APIError{StatusCode: http.StatusNotFound, Message: msg})
		return
	}
	data, err := supportbundle.Load(r.Context(), s.deps.Clientset, s.cfg.Session.Namespace, *b)
	if err != nil {
		writeError(w, fmt.Errorf("read the support bundle %s: %s", b.Name, redact.Text(err.Error())))
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", b.Name))
	_, _ = w.Write(data)
}
