package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// catalogFlags choose a target version in a release catalog: what `plan
// --to` previews and `upgrade --to` runs.
type catalogFlags struct {
	to, catalog, from, caFile string
	allowDowngrade, install   bool
	// set are --set name=value overrides of the catalog's values.
	set []string
}

func (f *catalogFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.to, "to", "", "the version to reach, through the catalog's releases (with --catalog)")
	cmd.Flags().StringVar(&f.catalog, "catalog", "", "the release catalog: a directory with catalog.yaml, the file, an https:// URL, or configmap/NAME (in -n's namespace)")
	cmd.Flags().StringVar(&f.from, "from", "", "the version the cluster runs, instead of detecting it with the catalog's spec.detect")
	cmd.Flags().StringVar(&f.caFile, "catalog-ca-file", "", "a CA certificate (PEM) trusted for an https:// catalog, besides the system's")
	cmd.Flags().BoolVar(&f.allowDowngrade, "allow-downgrade", false, "allow a target older than the running version (one hop)")
	cmd.Flags().StringArrayVar(&f.set, "set", nil, "override a value of the catalog's plan template (name=value, repeatable; the catalog's spec.values names them)")
	cmd.Flags().BoolVar(&f.install, "install", false, "the platform is not installed: run the target's plan alone (refused when a version source finds the platform)")
}

func (f *catalogFlags) given() bool { return f.to != "" || f.catalog != "" }

func (f *catalogFlags) validate() error {
	switch {
	case f.to == "":
		return errors.New("--to VERSION is required with --catalog: the version to reach")
	case f.catalog == "":
		return errors.New("--catalog is required with --to: a directory with catalog.yaml, an https:// URL, or configmap/NAME")
	}
	if _, err := semver.NewVersion(f.to); err != nil {
		return fmt.Errorf("--to %q is not a semantic version: write it as 1.2.3 or v1.2.3", f.to)
	}
	for _, kv := range f.set {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("--set %q: write it as name=value", kv)
		}
	}
	if f.from != "" && f.install {
		return errors.New("--from and --install: an install starts from no version")
	}
	if f.from != "" {
		if _, err := semver.NewVersion(f.from); err != nil {
			return fmt.Errorf("--from %q is not a semantic version: write it as 1.2.3 or v1.2.3", f.from)
		}
	}
	return nil
}

// againCommand is the command line that goes on with this upgrade.
func (f *catalogFlags) againCommand() string {
	return fmt.Sprintf("`upshift upgrade --to %s --catalog %s`", f.to, f.catalog)
}

// openCatalog reads the catalog the flags name; cs may be nil (no
// cluster) unless the catalog is a ConfigMap.
func (f *catalogFlags) openCatalog(ctx context.Context, kf *kubeFlags, cs *clients.Set) (*catalog.Catalog, error) {
	ns, _, err := kf.cf.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		ns = "default"
	}
	ref, err := catalog.ParseRef(f.catalog, ns)
	if err != nil {
		return nil, err
	}
	opts := catalog.Options{CAFile: f.caFile}
	if ref.ConfigMap != "" {
		if cs == nil {
			return nil, fmt.Errorf("--catalog %s is read from the cluster: %w", f.catalog, errNoCluster)
		}
		cfg, err := kf.restConfig()
		if err != nil {
			return nil, err
		}
		var objs source.Objects
		if objs, err = resolve.NewObjects(cfg); err != nil {
			return nil, err
		}
		opts.Objects = objs
	}
	cat, err := catalog.Open(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	for _, kv := range f.set {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	if err := cat.SetValues(values); err != nil {
		return nil, fmt.Errorf("--set %w", err)
	}
	return cat, nil
}

// request is what the flags ask for.
func (f *catalogFlags) request() upgrade.Request {
	req := upgrade.Request{Target: semver.MustParse(f.to), Install: f.install, AllowDowngrade: f.allowDowngrade}
	if f.from != "" {
		req.From = semver.MustParse(f.from)
	}
	return req
}

// solve finds the path from the version the cluster runs (detected, or
// --from) to --to.
func (f *catalogFlags) solve(ctx context.Context, cat *catalog.Catalog, cs *clients.Set) (*upgrade.Solution, error) {
	s, err := upgrade.Solve(ctx, cat, cs, f.request())
	if err != nil {
		return nil, f.explain(cat, err)
	}
	return s, nil
}

// explain adds to an error of upgrade.Solve or Hops.Run the flags that
// are the way out.
func (f *catalogFlags) explain(cat *catalog.Catalog, err error) error {
	var installed *upgrade.InstalledError
	var peers *upgrade.PeersError
	var detect *catalog.DetectError
	var refused *upgrade.RefusedError
	var preflight *upgrade.PreflightError
	var removed *upgrade.RemovedAPIsError
	var verify *upgrade.VerifyError
	var aborted *upgrade.AbortedError
	switch {
	case errors.As(err, &aborted):
		return &exitError{code: ExitWaiting, err: err} // as upshift abort left it
	case errors.As(err, &refused):
		if refusal(err) {
			if refused.Result != nil {
				return withDecisionHint(err, refused.Result.Decision)
			}
			return err
		}
		return fmt.Errorf("upgrade: run %s: %w", refused.Run, err)
	case errors.As(err, &preflight):
		return preflightProblems(preflight.Name, preflight.Errs)
	case errors.As(err, &removed):
		return removedAPIs(removed)
	case errors.As(err, &verify):
		return &exitError{code: ExitOperator, err: err}
	case errors.Is(err, upgrade.ErrNoCluster):
		return fmt.Errorf("%w: %w (or give the version it runs with --from)", err, errNoCluster)
	case errors.Is(err, upgrade.ErrNoDetect):
		return fmt.Errorf("catalog %s: %w: give the version the cluster runs with --from", cat.Where, err)
	case errors.As(err, &installed):
		return fmt.Errorf("--install: %w: leave --install out to upgrade it", err)
	case errors.Is(err, catalog.ErrNothingInstalled):
		return fmt.Errorf("catalog %s: %w\nto install the platform, add --install; if it runs a version the sources cannot see, give it with --from", cat.Where, err)
	case errors.As(err, &detect):
		return fmt.Errorf("catalog %s: %w\nfix the platform or the catalog's spec.detect, or give the version the cluster runs with --from", cat.Where, err)
	case errors.As(err, &peers):
		return fmt.Errorf("catalog %s: %w\nnothing was changed; fix the peer's kubeconfig Secret or its access, or remove the Secret of a peer that is gone", cat.Where, err)
	}
	return fmt.Errorf("catalog %s: %w", cat.Where, err)
}

// removedAPIs lists what the removed-API scan before a hop that brings a
// Kubernetes minor found, as preflightProblems does.
func removedAPIs(e *upgrade.RemovedAPIsError) error {
	return listLines(fmt.Sprintf("%s: the release installs Kubernetes %s (the cluster runs %s): the scan for API versions Kubernetes %d.%d no longer serves found %d problem(s), nothing was changed:",
		e.Name, e.To, e.From, e.To.Major(), e.To.Minor(), len(e.Report.Lines())), e.Report.Lines())
}
