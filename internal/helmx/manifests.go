package helmx

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
)

// Manifest is the manifest Helm recorded for a release's deployed
// revision: the objects as the chart rendered them, which Helm reads
// back on the release's next upgrade or rollback.
type Manifest struct {
	Name      string
	Namespace string
	Revision  int
	Manifest  string
}

// Deployed returns the deployed revision of every release in every
// namespace with its manifest (`helm list --all-namespaces --deployed`
// then `helm get manifest`). It reads the release Secrets of every
// namespace, so it needs list on secrets cluster-wide.
func (c *Client) Deployed(ctx context.Context) ([]Manifest, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := c.actionConfig("")
	if err != nil {
		return nil, err
	}
	list := action.NewList(cfg)
	list.AllNamespaces = true
	list.Deployed = true
	list.SetStateMask()
	rels, err := list.Run()
	if err != nil {
		return nil, fmt.Errorf("helm list --all-namespaces --deployed: %w", err)
	}
	out := make([]Manifest, len(rels))
	for i, r := range rels {
		out[i] = Manifest{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Manifest: r.Manifest}
	}
	return out, nil
}
