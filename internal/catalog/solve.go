package catalog

import (
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/versions"
)

// Path is the releases an upgrade stops at, from req.Current to
// req.Target, under the catalog's constraints (versions.Path's rules).
func (c *Catalog) Path(req versions.Request) ([]versions.Release, error) {
	rels, err := c.Releases()
	if err != nil {
		return nil, err
	}
	return versions.Path(rels, req)
}

// Passed are the catalog's releases an upgrade from `from` along path
// goes past without stopping (a skipped patch), lowest first.
func (c *Catalog) Passed(from *semver.Version, path []versions.Release) []*semver.Version {
	if len(path) == 0 {
		return nil
	}
	to := path[len(path)-1].Version
	stops := map[string]bool{}
	for _, r := range path {
		stops[r.Version.String()] = true
	}
	rels, _ := c.Releases()
	var out []*semver.Version
	for _, r := range rels {
		v := r.Version
		if v.GreaterThan(from) && v.LessThan(to) && !stops[v.String()] && v.Prerelease() == "" {
			out = append(out, v)
		}
	}
	sort.Sort(semver.Collection(out))
	return out
}
