package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
)

// A run's preview, as shown before it started, is kept in a ConfigMap of
// its own (written once when the server starts the run, replaced when it
// starts it again), so a run's detail can show the diffs it was started
// on, after the cluster has moved. The preview is already redacted
// (Secret values hidden, URL credentials scrubbed); the run record stays
// small.
const (
	previewPrefix = "upshift-preview-"
	previewKey    = "preview.json"
	// maxPreview keeps the ConfigMap under the API server's object limit;
	// a larger preview is not kept (the detail says so).
	maxPreview = 900 << 10
)

// savePreview keeps run's preview; a preview too large is skipped, with a
// line in the log. An error writing it does not stop the run: the
// preview is for reading later, not for driving.
func (s *Server) savePreview(ctx context.Context, run string, p *runner.PlanPreview) {
	if p == nil {
		return
	}
	b, err := json.Marshal(p)
	if err == nil && len(b) > maxPreview {
		err = fmt.Errorf("%d bytes, more than a ConfigMap keeps", len(b))
	}
	if err == nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: previewPrefix + run, Namespace: s.cfg.Session.Namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "upshift", "upshift.dev/run": run}},
			Data: map[string]string{previewKey: string(b)}}
		cms := s.deps.Clientset.CoreV1().ConfigMaps(s.cfg.Session.Namespace)
		if _, err = cms.Create(ctx, cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		s.cfg.Log(redact.Text(fmt.Sprintf("the preview of run %s is not kept: %v", run, err)))
	}
}

func (s *Server) handleRunPreview(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	cm, err := s.deps.Clientset.CoreV1().ConfigMaps(s.cfg.Session.Namespace).Get(r.Context(), previewPrefix+name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		writeError(w, &APIError{StatusCode: http.StatusNotFound, Message: fmt.Sprintf(
			"no preview was kept for run %s: the server keeps the preview of the runs it starts (the CLI's and the controller's keep none); POST /api/plans/preview previews a plan against the cluster as it is now", name)})
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	var p runner.PlanPreview
	if err := json.Unmarshal([]byte(cm.Data[previewKey]), &p); err != nil {
		writeError(w, fmt.Errorf("configmap %s: %w", cm.Name, err))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// prunePreviews deletes the kept previews of runs that are gone (the
// runner keeps the last runs only). It runs when the server starts,
// before it starts any run of its own.
func (s *Server) prunePreviews(ctx context.Context) {
	cms := s.deps.Clientset.CoreV1().ConfigMaps(s.cfg.Session.Namespace)
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=upshift,upshift.dev/run"})
	if err != nil {
		s.cfg.Log(fmt.Sprintf("list the kept previews: %v", err))
		return
	}
	for _, cm := range list.Items {
		if !strings.HasPrefix(cm.Name, previewPrefix) || s.runs.get(s.cfg.Session.Namespace, cm.Labels["upshift.dev/run"]) != nil {
			continue
		}
		if err := cms.Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			s.cfg.Log(fmt.Sprintf("delete the preview of a run that is gone (%s): %v", cm.Name, err))
		}
	}
}
