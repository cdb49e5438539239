package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

// Bundle is a plan whose file references became URLs under one base, and
// the files to serve there, by URL path.
type Bundle struct {
	Plan  *v1alpha1.UpgradePlan
	Files map[string][]byte
}

// Make rewrites a loaded, valid plan for base (an https:// URL the files
// will be served at). Sources and charts already given by URL, inline,
// repository or OCI reference stay as they are.
func Make(ctx context.Context, l *plan.Loaded, base string) (*Bundle, error) {
	if _, err := url.Parse(base); err != nil || !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("bundle base %q: use an https:// URL", base)
	}
	b := &Bundle{Plan: l.Plan.DeepCopy(), Files: map[string][]byte{}}
	serve := func(name string, content []byte) string {
		b.Files["/"+name] = content
		return strings.TrimSuffix(base, "/") + "/" + name
	}
	serveSource := func(field string, s *v1alpha1.Source) error {
		if s == nil || s.Path == "" {
			return nil
		}
		content, err := source.Read(ctx, *s, source.Env{BaseDir: l.BaseDir})
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		*s = v1alpha1.Source{URL: serve(path.Join("sources", field+".yaml"), content)}
		return nil
	}
	for i := range b.Plan.Spec.Stages {
		for j := range b.Plan.Spec.Stages[i].Steps {
			s := &b.Plan.Spec.Stages[i].Steps[j]
			field := fmt.Sprintf("stages-%d-steps-%d", i, j)
			var err error
			switch {
			case s.CRDs != nil:
				err = serveSource(field+"-crds", &s.CRDs.Source)
			case s.Manifests != nil:
				err = serveSource(field+"-manifests", &s.Manifests.Source)
			case s.Job != nil:
				if err = serveSource(field+"-job", &s.Job.Source); err == nil {
					err = serveSource(field+"-rollbackjob", s.Job.RollbackJob)
				}
			case s.Recreate != nil:
				err = serveSource(field+"-recreate", s.Recreate.From)
			case s.Helm != nil:
				err = helm(ctx, s.Helm, l.BaseDir, field, serve)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// helm serves a local chart as an archive and folds the values files into
// values, in Helm's order (files first, then values over them).
func helm(ctx context.Context, h *v1alpha1.HelmStep, baseDir, field string, serve func(string, []byte) string) error {
	if helmx.LocalChart(h.Chart, h.Repo) {
		archive, err := helmx.FetchChart(ctx, helmx.ChartRef{Chart: h.Chart}, baseDir)
		if err != nil {
			return fmt.Errorf("%s chart: %w", field, err)
		}
		h.Chart = serve(path.Join("charts", field+".tgz"), archive)
	}
	if len(h.ValuesFiles) == 0 {
		return nil
	}
	if len(h.ValuesFrom) > 0 {
		// Folded into values, the files would win over valuesFrom, which
		// Helm's order puts after them.
		return fmt.Errorf("%s: valuesFiles and valuesFrom together cannot be folded into values in Helm's order: move the files' values into a ConfigMap and name it first in valuesFrom", field)
	}
	var files [][]byte
	for k, f := range h.ValuesFiles {
		content, err := source.Read(ctx, v1alpha1.Source{Path: f}, source.Env{BaseDir: baseDir})
		if err != nil {
			return fmt.Errorf("%s valuesFiles[%d]: %w", field, k, err)
		}
		files = append(files, content)
	}
	var inline []byte
	if h.Values != nil {
		inline = h.Values.Raw
	}
	merged, err := helmx.MergeValues(files, inline)
	if err != nil {
		return fmt.Errorf("%s values: %w", field, err)
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	h.Values, h.ValuesFiles = &apiextensionsv1.JSON{Raw: raw}, nil
	return nil
}
