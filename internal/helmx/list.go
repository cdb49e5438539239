package helmx

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
)

// List returns the latest revision of every release in the namespace
// (every namespace when it is ""), whatever its status: `helm list --all`.
func (c *Client) List(ctx context.Context, namespace string) ([]ReleaseInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := c.actionConfig(namespace)
	if err != nil {
		return nil, err
	}
	list := action.NewList(cfg)
	list.All = true
	list.AllNamespaces = namespace == ""
	list.SetStateMask()
	rels, err := list.Run()
	if err != nil {
		return nil, fmt.Errorf("helm list: %w", err)
	}
	out := make([]ReleaseInfo, len(rels))
	for i, r := range rels {
		out[i] = infoOf(r)
	}
	return out, nil
}
