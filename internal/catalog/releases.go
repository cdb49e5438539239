package catalog

import (
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/versions"
)

// Releases are the catalog's releases as the path solver reads them. The
// catalog must have passed Validate.
func (c *ReleaseCatalog) Releases() ([]versions.Release, error) {
	out := make([]versions.Release, 0, len(c.Spec.Releases))
	for i, r := range c.Spec.Releases {
		v, err := semver.NewVersion(r.Version)
		if err != nil {
			return nil, fmt.Errorf("spec.releases[%d].version: %w", i, err)
		}
		rel := versions.Release{Version: v, RequiredStop: r.RequiredStop}
		if r.InstallsKubernetes != "" {
			if rel.InstallsKubernetes, err = versions.Kubernetes(r.InstallsKubernetes); err != nil {
				return nil, fmt.Errorf("spec.releases[%d].installsKubernetes: %w", i, err)
			}
		}
		for _, c := range []struct {
			s   string
			out **semver.Constraints
		}{{r.Kubernetes, &rel.Kubernetes}, {r.Peers, &rel.Peers}, {r.AllowFrom, &rel.AllowFrom}} {
			if c.s == "" {
				continue
			}
			if *c.out, err = semver.NewConstraint(c.s); err != nil {
				return nil, fmt.Errorf("spec.releases[%d]: %q: %w", i, c.s, err)
			}
		}
		out = append(out, rel)
	}
	return out, nil
}

// Release is the catalog's entry for v; false when it lists no such
// version.
func (c *ReleaseCatalog) Release(v *semver.Version) (Release, bool) {
	for _, r := range c.Spec.Releases {
		if rv, err := semver.NewVersion(r.Version); err == nil && rv.Equal(v) {
			return r, true
		}
	}
	return Release{}, false
}
