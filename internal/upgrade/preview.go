package upgrade

import (
	"context"
	"fmt"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
)

// HopPreview is one hop of a solution: its plan and what it would
// change.
type HopPreview struct {
	From    string              `json:"from,omitempty"`
	To      string              `json:"to"`
	Plan    string              `json:"plan"`
	Preview *runner.PlanPreview `json:"preview,omitempty"`
	// Note says why a hop has no preview.
	Note string `json:"note,omitempty"`
	// Scan says what the removed-API scan of a hop that brings a
	// Kubernetes minor found (nothing: a finding is a *RemovedAPIsError).
	Scan string `json:"scan,omitempty"`
	// Stages are the plan's stage names.
	Stages []string `json:"stages"`
	// Resolved is the hop's plan with its sources, for a driver to print.
	Resolved *resolve.Plan `json:"-"`
}

// ResolveFunc reads a hop plan's sources (Hops.Resolve).
type ResolveFunc func(ctx context.Context, name string, l *plan.Loaded) (*resolve.Plan, error)

// Previews renders and resolves every hop's plan and, with a session,
// checks hop 1 as apply will (a problem is a *PreflightError; objects in
// API versions a Kubernetes minor it brings removes, a
// *RemovedAPIsError) and previews each hop. A later hop's preview sees the cluster as it is, not
// as the hops before it will leave it: when it cannot be computed, its
// Note says why. sess nil (no cluster) checks the files only.
func (s *Solution) Previews(ctx context.Context, sess *runner.Session, cs *clients.Set, resolve ResolveFunc) ([]HopPreview, error) {
	hops := make([]HopPreview, len(s.Path))
	for i := range s.Path {
		l, err := s.Plan(ctx, i)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("release %s's plan %s", s.Path[i].Version, l.Plan.Name)
		p, err := resolve(ctx, name, l)
		if err != nil {
			return nil, err
		}
		hp := HopPreview{From: VersionString(s.HopFrom(i)), To: s.Path[i].Version.String(), Plan: l.Plan.Name, Resolved: p}
		for _, st := range p.Plan.Spec.Stages {
			hp.Stages = append(hp.Stages, st.Name)
		}
		switch {
		case sess == nil:
			hp.Note = "no cluster configured (--kubeconfig or KUBECONFIG): checked the files only"
		case i == 0:
			// The first hop runs on the cluster as it is: check it as apply will.
			if errs := sess.Preflight(ctx, p); len(errs) > 0 {
				return nil, &PreflightError{Name: name, Errs: errs}
			}
			if hp.Scan, err = ScanRemovedAPIs(ctx, cs, s, i, name); err != nil {
				return nil, err
			}
			fallthrough
		default:
			if hp.Preview, err = sess.Preview(ctx, p); err != nil {
				hp.Note = fmt.Sprintf("no preview before hop %d has run: %v", i, err)
			}
		}
		hops[i] = hp
	}
	return hops, nil
}
