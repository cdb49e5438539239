package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apps"
)

// The AppRollout routes: the rollouts the server's credentials may read,
// and a person's requests on them. A request is the patch `upshift app`
// sends (apps.Patch): the controller acts on it, as it does on kubectl's
// annotation; the server never moves a rollout itself.

// appsClient is a typed client of AppRollouts.
func appsClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// appRoutes are the routes of the rollouts, a POST per request.
func (s *Server) appRoutes() []route {
	rs := []route{
		{method: "GET", path: "/api/apps", access: read,
			summary:  "AppRollouts the server's credentials may list (?namespace=NS for one namespace), by namespace and name",
			response: AppList{}, handler: s.handleAppsList},
		{method: "GET", path: "/api/apps/{namespace}/{name}", access: read,
			summary: "An AppRollout: its steps, analysis, rollback, conditions and the requests that apply now (redacted)", response: AppDetail{}, handler: s.handleAppGet},
	}
	for _, req := range apps.AllRequests {
		rs = append(rs, route{method: "POST", path: "/api/apps/{namespace}/{name}/" + string(req), access: act,
			summary:  requestSummary[req] + "; the controller acts on it (409 when it does not apply where the rollout stands)",
			response: AppDetail{}, status: http.StatusAccepted, handler: s.handleAppRequest(req)})
	}
	return rs
}

var requestSummary = map[apps.Request]string{
	apps.RequestPromote: "End the pause of the canary step or preview the rollout holds (annotation " + v1alpha1.AnnotationPromote + ")",
	apps.RequestAbort:   "Fail the rollout and roll it back (annotation " + v1alpha1.AnnotationAbort + ")",
	apps.RequestRetry:   "Start a rolled-back version again, or a failed rollback (annotation " + v1alpha1.AnnotationRetry + ")",
	apps.RequestPause:   "Hold the rollout where it is (spec.paused: true)",
	apps.RequestResume:  "Let a paused rollout go on (spec.paused: false)",
}

func (s *Server) handleAppsList(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	if ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			writeError(w, badRequest("namespace", "namespace %q: %s", ns, strings.Join(errs, "; ")))
			return
		}
	}
	list := &v1alpha1.AppRolloutList{}
	if err := s.apps.List(r.Context(), list, client.InNamespace(ns)); err != nil {
		writeError(w, appsError(err, "list approllouts", ns))
		return
	}
	items := make([]AppSummary, len(list.Items))
	for i := range list.Items {
		items[i] = appSummary(&list.Items[i])
	}
	slices.SortFunc(items, func(a, b AppSummary) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	writeJSON(w, http.StatusOK, AppList{Items: items})
}

func (s *Server) handleAppGet(w http.ResponseWriter, r *http.Request) {
	a, err := s.getApp(r.Context(), r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, appDetail(a, time.Now()))
}

// handleAppRequest patches the rollout as apps.Patch asks, when the
// request applies where it stands: a promote of a rollout no step holds
// would be recorded as handled and do nothing, which a person clicking
// a stale page should hear about instead.
func (s *Server) handleAppRequest(req apps.Request) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := s.getApp(r.Context(), r)
		if err != nil {
			writeError(w, err)
			return
		}
		if !slices.Contains(apps.Requests(a), req) {
			writeError(w, &APIError{StatusCode: http.StatusConflict,
				Message: fmt.Sprintf("approllout %s/%s is %s: %s does not apply now (it may: %v)", a.Namespace, a.Name, apps.Display(a), req, apps.Requests(a))})
			return
		}
		// Locked to the version read: the check above holds of what is
		// patched, or the person is told the rollout moved.
		patch, err := apps.Patch(req, time.Now(), a.ResourceVersion)
		if err != nil {
			writeError(w, err)
			return
		}
		if err := s.apps.Patch(r.Context(), a, client.RawPatch(types.MergePatchType, patch)); err != nil {
			writeError(w, appsError(err, "patch approllout", a.Namespace))
			return
		}
		s.cfg.Log(fmt.Sprintf("approllout %s/%s: %s requested by %s", a.Namespace, a.Name, req, caller(r)))
		writeJSON(w, http.StatusAccepted, appDetail(a, time.Now()))
	}
}

// getApp reads the rollout the path names.
func (s *Server) getApp(ctx context.Context, r *http.Request) (*v1alpha1.AppRollout, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, badRequest("namespace", "namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, badRequest("name", "name %q: %s", name, strings.Join(errs, "; "))
	}
	a := &v1alpha1.AppRollout{}
	if err := s.apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, a); err != nil {
		return nil, appsError(err, "get approllout "+name, ns)
	}
	return a, nil
}

// appsError answers the API server's refusal with its own status and a
// message that says what to do.
func appsError(err error, what, ns string) error {
	where := "in every namespace"
	if ns != "" {
		where = "in namespace " + ns
	}
	var status apierrors.APIStatus
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && isNoKind(err):
		return &APIError{StatusCode: http.StatusNotFound, Message: "the AppRollout CRD is not installed on this cluster: `upshift crds | kubectl apply --server-side -f -` (docs/apps.md)"}
	case apierrors.IsForbidden(err):
		hint := "grant its user the right"
		if ns == "" {
			hint += ", or list one namespace (GET /api/apps?namespace=NS)"
		}
		return &APIError{StatusCode: http.StatusForbidden, Message: fmt.Sprintf("the server's credentials may not %s %s: %s", what, where, hint)}
	case apierrors.IsConflict(err):
		return &APIError{StatusCode: http.StatusConflict, Message: "the rollout changed while the request was made: look at it again and ask again"}
	case (apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsTooManyRequests(err)) && errors.As(err, &status):
		return &APIError{StatusCode: int(status.Status().Code), Message: err.Error()}
	case errors.As(err, &status):
		// The cluster refused the server (its credentials expired: a
		// 401): a gateway's failure, not the caller's, whose session a
		// 401 would end.
		return &APIError{StatusCode: http.StatusBadGateway, Message: "the cluster answered: " + err.Error()}
	}
	return err
}

// isNoKind tells a 404 of the resource type from one of an object.
func isNoKind(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name == ""
}
