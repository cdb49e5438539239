package catalog

import (
	"context"
	"fmt"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/versions"
)

// Matrix maps a version to the versions an upgrade may reach from it.
type Matrix map[string][]string

// ReadMatrix reads the compatibility matrix spec.compatibility names; nil
// when the catalog names none.
func (c *Catalog) ReadMatrix(ctx context.Context, cs *clients.Set) (Matrix, string, error) {
	m := c.Spec.Compatibility
	if m == nil {
		return nil, "", nil
	}
	ref := m.ConfigMap
	where := fmt.Sprintf("compatibility matrix configMap %s/%s key %s", ref.Namespace, ref.Name, ref.Key)
	cm, err := cs.Clientset.CoreV1().ConfigMaps(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	raw, ok := cm.Data[ref.Key]
	if !ok {
		return nil, where, fmt.Errorf("%s: no such key", where)
	}
	var matrix Matrix
	if err := yaml.UnmarshalStrict([]byte(raw), &matrix); err != nil {
		return nil, where, fmt.Errorf("%s: not a map of a version to a list of versions (v1.0.0: [v1.1.0]): %w", where, err)
	}
	return matrix, where, nil
}

// CheckPath checks every hop of a path against the matrix: the hop's
// version must be listed under the lowest version among the hop's start
// and the peers (the Liqo upgrade controller's rule, applied per hop, as
// the peers stay where they are while this cluster moves). It says which
// hop, from which version, and whose.
func (m Matrix) CheckPath(from *semver.Version, path []versions.Release, peers []versions.Peer) error {
	for _, hop := range path {
		low, who := from, "this cluster"
		for _, p := range peers {
			if low == nil || p.Version.LessThan(low) {
				low, who = p.Version, "peer "+p.Name
			}
		}
		if low == nil { // an install with no peers: nothing to be compatible with
			from = hop.Version
			continue
		}
		if !m.allows(low, hop.Version) {
			return fmt.Errorf("%s is not listed as reachable from %s (the lowest version, %s's): a hop to it would leave %s behind what it supports", hop.Version, low, who, who)
		}
		from = hop.Version
	}
	return nil
}

func (m Matrix) allows(from, to *semver.Version) bool {
	for k, targets := range m {
		kv, err := semver.NewVersion(k)
		if err != nil || !kv.Equal(from) {
			continue
		}
		for _, t := range targets {
			if tv, err := semver.NewVersion(t); err == nil && tv.Equal(to) {
				return true
			}
		}
	}
	return from.Equal(to)
}
