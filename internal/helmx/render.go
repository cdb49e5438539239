package helmx

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
)

// Deployed is a release's revision as stored: what a step compares against
// to know whether an upgrade is already done, and what a preview diffs.
type Deployed struct {
	ReleaseInfo
	// Manifest is the rendered YAML of the revision's objects.
	Manifest string
	// Values are the values the revision was installed with (not the
	// chart's defaults). They may hold secrets: never log them.
	Values map[string]any
}

// Latest returns the release's latest revision, whatever its status; the
// error matches ErrReleaseNotFound when it has none.
func (c *Client) Latest(ctx context.Context, name, namespace string) (Deployed, error) {
	if err := ctx.Err(); err != nil {
		return Deployed{}, err
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return Deployed{}, err
	}
	rel, err := cfg.Releases.Last(name)
	if err != nil {
		return Deployed{}, fmt.Errorf("helm status %s/%s: %w", namespace, name, err)
	}
	return deployedOf(rel), nil
}

// Revision returns one stored revision of the release.
func (c *Client) Revision(ctx context.Context, name, namespace string, revision int) (Deployed, error) {
	if err := ctx.Err(); err != nil {
		return Deployed{}, err
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return Deployed{}, err
	}
	rel, err := cfg.Releases.Get(name, revision)
	if err != nil {
		return Deployed{}, fmt.Errorf("helm get %s/%s revision %d: %w", namespace, name, revision, err)
	}
	return deployedOf(rel), nil
}

func deployedOf(r *release.Release) Deployed {
	return Deployed{ReleaseInfo: infoOf(r), Manifest: r.Manifest, Values: r.Config}
}

// Render renders the chart as the release would be installed or upgraded
// now, against the cluster's API versions and with its lookups, without
// changing anything (Helm's server-side dry run). It returns the manifest.
// With validate, Helm runs its schema check too: on an API server that
// validates fields itself (every Kubernetes since 1.27) it validates
// nothing, and only downloads the OpenAPI documents to learn so.
func (c *Client) Render(ctx context.Context, name, namespace string, ch *Chart, values map[string]any, validate bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return "", err
	}
	_, err = cfg.Releases.Last(name)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrReleaseNotFound) {
		return "", fmt.Errorf("helm render %s/%s: %w", namespace, name, err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName = name
	in.Namespace = namespace
	in.DryRun = true
	in.DryRunOption = "server"
	in.Replace = true
	in.IsUpgrade = exists // .Release.IsUpgrade, and no conflict check against its own objects
	in.DisableOpenAPIValidation = !validate
	rel, err := in.RunWithContext(ctx, ch, values)
	if err != nil {
		return "", fmt.Errorf("helm render %s/%s: %w", namespace, name, err)
	}
	return rel.Manifest, nil
}
