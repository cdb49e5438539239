// Package helmreleases is the `helmReleases` gate: every Helm release of
// a namespace (or every one named) is deployed, its latest revision
// neither failed nor pending an operation (a runbook's "Helm releases
// deployed"). It looks once: a release pending an upgrade is not waited
// for, it is reported.
package helmreleases

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/step"
)

// Gate checks Helm releases.
type Gate struct {
	spec    v1alpha1.HelmReleasesGate
	timeout time.Duration
	helm    *helmx.Client
}

var _ step.Gate = (*Gate)(nil)

// New builds the gate.
func New(spec v1alpha1.HelmReleasesGate, timeout time.Duration, helm *helmx.Client) (*Gate, error) {
	if helm == nil {
		return nil, fmt.Errorf("no Helm client")
	}
	return &Gate{spec: spec, timeout: timeout, helm: helm}, nil
}

// Check lists the releases and reports every one not deployed.
func (g *Gate) Check(ctx context.Context) (step.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	rels, err := g.helm.List(ctx, g.spec.Namespace)
	if err != nil {
		return step.Result{}, err
	}
	return Judge(rels, g.spec), nil
}

// Judge is the gate's verdict on the releases listed: pure, for tests.
func Judge(rels []helmx.ReleaseInfo, spec v1alpha1.HelmReleasesGate) step.Result {
	byName := map[string]helmx.ReleaseInfo{}
	for _, r := range rels {
		byName[r.Namespace+"/"+r.Name] = r
		if spec.Namespace != "" {
			byName[r.Name] = r
		}
	}
	var bad []string
	checked := 0
	if len(spec.Names) > 0 {
		for _, n := range spec.Names {
			r, ok := byName[n]
			switch {
			case !ok:
				bad = append(bad, n+": not found")
			case r.Status != helmx.StatusDeployed:
				bad = append(bad, describe(r))
			}
			checked++
		}
	} else {
		for _, r := range rels {
			if r.Status != helmx.StatusDeployed {
				bad = append(bad, describe(r))
			}
			checked++
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return step.Failure("%d of %d Helm release(s) not deployed: %s", len(bad), checked, strings.Join(bad, "; "))
	}
	return step.Success("%d Helm release(s) deployed", checked)
}

func describe(r helmx.ReleaseInfo) string {
	d := fmt.Sprintf("%s/%s revision %d is %s", r.Namespace, r.Name, r.Revision, r.Status)
	if r.Description != "" {
		d += " (" + r.Description + ")"
	}
	return d
}
