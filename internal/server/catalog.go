package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// catalogRef is the catalog a request names: a ConfigMap or an https
// URL, or the server's own (its flag may name a local path; a request
// may not, so an API client cannot make the server read its files).
func (s *Server) catalogRef(req UpgradeRequest) (string, error) {
	switch ref := req.Catalog; {
	case ref == "" && s.cfg.Catalog == "":
		return "", badRequest("catalog", "no catalog: name one (configmap/NAME or an https:// URL), or start the server with --catalog")
	case ref == "":
		return s.cfg.Catalog, nil
	case ref == s.cfg.Catalog, strings.HasPrefix(ref, "configmap/"), strings.HasPrefix(ref, "https://"):
		return ref, nil
	}
	return "", badRequest("catalog", "catalog %q: a request may name a ConfigMap (configmap/NAME) or an https:// URL; a local catalog is given to the server with --catalog", req.Catalog)
}

// openCatalog reads the request's catalog with its values, and the
// request's target: its targetVersion, else the server's (--target),
// else the catalog's newest release.
func (s *Server) openCatalog(ctx context.Context, req UpgradeRequest) (*catalog.Catalog, upgrade.Request, error) {
	var target *semver.Version
	if req.TargetVersion != "" {
		var err error
		if target, err = semver.NewVersion(req.TargetVersion); err != nil {
			return nil, upgrade.Request{}, badRequest("targetVersion", "targetVersion %q is not a semantic version: write it as 1.2.3 or v1.2.3", req.TargetVersion)
		}
	}
	if req.IgnoreHostPreflights && !s.cfg.AllowIgnoreHostPreflights {
		return nil, upgrade.Request{}, badRequest("ignoreHostPreflights", "ignoreHostPreflights is not allowed on this server (--allow-ignore-host-preflights): fix what the host preflights find; leave it false")
	}
	where, err := s.catalogRef(req)
	if err != nil {
		return nil, upgrade.Request{}, err
	}
	ref, err := catalog.ParseRef(where, s.cfg.CatalogNamespace)
	if err != nil {
		return nil, upgrade.Request{}, badRequest("catalog", "%v", err)
	}
	opts := catalog.Options{CAFile: s.cfg.CatalogCAFile}
	if ref.ConfigMap != "" {
		if opts.Objects, err = resolve.NewObjects(s.cfg.Rest); err != nil {
			return nil, upgrade.Request{}, err
		}
	}
	cat, err := catalog.Open(ctx, ref, opts)
	if err != nil {
		return nil, upgrade.Request{}, badRequest("catalog", "%v", err)
	}
	if err := cat.SetValues(req.Values); err != nil {
		field := "values"
		for k := range req.Values {
			if _, ok := cat.Spec.Values[k]; !ok {
				field = "values." + k // the one refused
				break
			}
		}
		return nil, upgrade.Request{}, badRequest(field, "%s: %v", field, err)
	}
	if target == nil {
		if target, err = s.defaultTarget(cat); err != nil {
			return nil, upgrade.Request{}, err
		}
	}
	return cat, upgrade.Request{Target: target, AllowDowngrade: req.AllowDowngrade}, nil
}

// defaultTarget is the target of a request that names none, as
// embedded-cluster's client's: the server's --target, else the newest
// release of the catalog.
func (s *Server) defaultTarget(cat *catalog.Catalog) (*semver.Version, error) {
	if s.cfg.Target != "" {
		v, err := semver.NewVersion(s.cfg.Target)
		if err != nil {
			return nil, fmt.Errorf("upshift serve --target %q is not a semantic version: restart the server with --target 1.2.3", s.cfg.Target)
		}
		return v, nil
	}
	var newest *semver.Version
	for _, r := range cat.Spec.Releases {
		if v, err := semver.NewVersion(r.Version); err == nil && (newest == nil || v.GreaterThan(newest)) {
			newest = v
		}
	}
	if newest == nil {
		return nil, badRequest("targetVersion", "catalog %s has no release to upgrade to: name targetVersion, or add releases to the catalog", cat.Where)
	}
	return newest, nil
}

// resolve reads a plan's sources, its ConfigMaps and Secrets with the
// server's access.
func (s *Server) resolve(ctx context.Context, name string, l *plan.Loaded) (*resolve.Plan, error) {
	var objs source.Objects
	if len(resolve.ObjectSources(l.Plan)) > 0 {
		var err error
		if objs, err = resolve.NewObjects(s.cfg.Rest); err != nil {
			return nil, err
		}
	}
	l.AllowHTTP = s.cfg.Session.AllowHTTPSources
	p, err := resolve.Read(ctx, l, objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was changed", name, err)
	}
	return p, nil
}

// planError words an error of solving or checking the upgrade: a
// problem of the request, the catalog or the cluster's state is a 400
// naming what to fix; the API server failing is not the client's.
func planError(err error) error {
	var ae *APIError
	var pe *upgrade.PreflightError
	var removed *upgrade.RemovedAPIsError
	var status apierrors.APIStatus
	var uerr *url.Error
	switch {
	case errors.As(err, &ae):
		return err
	case errors.As(err, &pe):
		out := badRequest("", "%s", pe.Error()+": nothing was changed")
		for _, e := range pe.Errs {
			out.Errors = append(out.Errors, APIError{StatusCode: 400, Field: e.Field, Message: redact.Text(e.ErrorBody())})
		}
		return out
	case errors.As(err, &removed):
		out := badRequest("targetVersion", "%s: nothing was changed", removed.Error())
		for _, l := range removed.Report.Lines() {
			out.Errors = append(out.Errors, APIError{StatusCode: 400, Message: redact.Text(l)})
		}
		return out
	case errors.As(err, &status) && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err), errors.As(err, &uerr):
		return err
	}
	return badRequest("targetVersion", "%v", err)
}
