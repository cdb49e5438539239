package server

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The cluster's refusals answer the caller with what to do; the
// server's own credentials failing is a 502, never a 401 that would end
// the caller's session.
func TestAppsErrorSaysWhatToDo(t *testing.T) {
	gr := schema.GroupResource{Group: "upshift.dev", Resource: "approllouts"}
	for _, c := range []struct {
		name string
		err  error
		code int
		says string
	}{
		{"no CRD", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "upshift.dev", Kind: "AppRollout"}}, http.StatusNotFound, "CRD is not installed"},
		{"no such rollout", apierrors.NewNotFound(gr, "shop"), http.StatusNotFound, `"shop" not found`},
		{"forbidden everywhere", apierrors.NewForbidden(gr, "", errors.New("no")), http.StatusForbidden, "?namespace=NS"},
		{"changed meanwhile", apierrors.NewConflict(gr, "shop", errors.New("rv")), http.StatusConflict, "look at it again"},
		{"server's token expired", apierrors.NewUnauthorized("expired"), http.StatusBadGateway, "the cluster answered"},
	} {
		ae := apiError(appsError(c.err, "list approllouts", ""))
		if ae.StatusCode != c.code || !strings.Contains(ae.Message, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, ae.StatusCode, ae.Message, c.code, c.says)
		}
	}
}
