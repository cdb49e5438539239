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
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/versions"
)

// catalogFlags choose a target version in a release catalog: what `plan
// --to` previews and `upgrade --to` runs.
type catalogFlags struct {
	to, catalog, from, caFile string
	allowDowngrade, install   bool
}

func (f *catalogFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.to, "to", "", "the version to reach, through the catalog's releases (with --catalog)")
	cmd.Flags().StringVar(&f.catalog, "catalog", "", "the release catalog: a directory with catalog.yaml, the file, an https:// URL, or configmap/NAME (in -n's namespace)")
	cmd.Flags().StringVar(&f.from, "from", "", "the version the cluster runs, instead of detecting it with the catalog's spec.detect")
	cmd.Flags().StringVar(&f.caFile, "catalog-ca-file", "", "a CA certificate (PEM) trusted for an https:// catalog, besides the system's")
	cmd.Flags().BoolVar(&f.allowDowngrade, "allow-downgrade", false, "allow a target older than the running version (one hop)")
	cmd.Flags().BoolVar(&f.install, "install", false, "the platform is not installed: run the target's plan alone (refused when a version source finds the platform)")
}

func (f *catalogFlags) set() bool { return f.to != "" || f.catalog != "" }

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

// hops is a solved upgrade: where the cluster is, the path, and what the
// solver read to find it.
type hops struct {
	cat        *catalog.Catalog
	from, to   *semver.Version
	findings   []catalog.Finding // nil when --from gave the version
	kubernetes *semver.Version   // nil without a cluster
	peers      []versions.Peer
	// unchecked says what could not be checked without a cluster.
	unchecked string
	path      []versions.Release
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
		if objs, err = runner.NewObjects(cfg); err != nil {
			return nil, err
		}
		opts.Objects = objs
	}
	return catalog.Open(ctx, ref, opts)
}

// solve finds the path from the version the cluster runs (detected, or
// --from) to --to.
func (f *catalogFlags) solve(ctx context.Context, cat *catalog.Catalog, cs *clients.Set) (*hops, error) {
	h := &hops{cat: cat, to: semver.MustParse(f.to)}
	switch {
	case f.from != "":
		h.from = semver.MustParse(f.from)
	case cs == nil && f.install:
	case cs == nil:
		return nil, fmt.Errorf("no cluster to detect the running version on: %w (or give it with --from)", errNoCluster)
	default:
		var err error
		h.findings, h.from, err = detect(ctx, cat, cs)
		switch {
		case f.install && errors.Is(err, catalog.ErrNothingInstalled):
			h.from = nil
		case f.install && len(cat.Spec.Detect) == 0:
			h.findings = nil
		case f.install && err == nil:
			return nil, fmt.Errorf("--install: the cluster runs %s already (%s): leave --install out to upgrade it", h.from, describeFindings(h.findings))
		case errors.Is(err, catalog.ErrNothingInstalled):
			return nil, fmt.Errorf("%w\nto install the platform, add --install; if it runs a version the sources cannot see, give it with --from", err)
		case len(cat.Spec.Detect) == 0:
			return nil, fmt.Errorf("%w: give the version the cluster runs with --from", err)
		case err != nil:
			return nil, fmt.Errorf("%w\nfix the platform or the catalog's spec.detect, or give the version the cluster runs with --from", err)
		}
	}
	if cs != nil {
		info, err := cs.Clientset.Discovery().ServerVersion()
		if err != nil {
			return nil, fmt.Errorf("read the cluster's Kubernetes version: %w", err)
		}
		if h.kubernetes, err = versions.Kubernetes(info.GitVersion); err != nil {
			return nil, err
		}
	}
	if cs != nil {
		peers, problems, err := cat.ReadPeers(ctx, cs)
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Where, err)
		}
		if len(problems) > 0 {
			return nil, peerProblems(cat.Where, problems)
		}
		h.peers = peers
	} else if cat.Spec.Peers != nil || cat.Spec.Compatibility != nil {
		h.unchecked = "peers and the compatibility matrix not checked: no cluster configured"
	}
	path, err := cat.Path(versions.Request{Current: h.from, Target: h.to, Kubernetes: h.kubernetes, Peers: h.peers, AllowDowngrade: f.allowDowngrade})
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", cat.Where, err)
	}
	if cs != nil {
		matrix, where, err := cat.ReadMatrix(ctx, cs)
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Where, err)
		}
		if err := matrix.CheckPath(h.from, path, h.peers); matrix != nil && err != nil {
			return nil, fmt.Errorf("catalog %s: %s: %w", cat.Where, where, err)
		}
	}
	h.path = path
	return h, nil
}

// peerProblems lists the peers whose versions could not be read: each
// blocks, as skew cannot be checked against a peer nobody can see.
func peerProblems(where string, problems []catalog.PeerProblem) error {
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.Error()
	}
	them := "it"
	if len(problems) > 1 {
		them = "them"
	}
	return fmt.Errorf("catalog %s: cannot read the version of %d %s, so the upgrade cannot be checked against %s; nothing was changed:\n  %s\nfix the peer's kubeconfig Secret or its access, or remove the Secret of a peer that is gone",
		where, len(problems), plural(len(problems), "peer"), them, strings.Join(lines, "\n  "))
}

// detect reads the catalog's version sources and the one version they
// agree on.
func detect(ctx context.Context, cat *catalog.Catalog, cs *clients.Set) ([]catalog.Finding, *semver.Version, error) {
	findings := catalog.Detect(ctx, cs, cat.Spec.Detect)
	v, err := catalog.Agree(findings)
	if err != nil {
		return findings, nil, fmt.Errorf("catalog %s: %w", cat.Where, err)
	}
	return findings, v, nil
}

// hopFrom is the version hop i starts from; nil for an install.
func (h *hops) hopFrom(i int) *semver.Version {
	if i == 0 {
		return h.from
	}
	return h.path[i-1].Version
}

// hopName names hop i in messages: "1.0.0 → 1.1.0", "install 1.0.0".
func (h *hops) hopName(i int) string {
	if from := h.hopFrom(i); from != nil {
		return fmt.Sprintf("%s → %s", from, h.path[i].Version)
	}
	return "install " + h.path[i].Version.String()
}

// versionOrEmpty is v as text, "" for none (an install's start).
func versionOrEmpty(v *semver.Version) string {
	if v == nil {
		return ""
	}
	return v.String()
}

// plan is hop i's plan, validated.
func (h *hops) plan(ctx context.Context, i int) (*plan.Loaded, error) {
	return h.cat.PlanFor(ctx, h.path[i].Version, h.hopFrom(i))
}

// describe is the path in a line and what the solver read, for people.
func (h *hops) describe() []string {
	stops := make([]string, len(h.path))
	for i, r := range h.path {
		stops[i] = r.Version.String()
	}
	if h.from == nil {
		return []string{fmt.Sprintf("catalog %s: install %s (nothing installed)", h.cat.Where, h.to)}
	}
	lines := []string{fmt.Sprintf("catalog %s: from %s to %s in %d %s: %s", h.cat.Where, h.from, h.to, len(h.path), plural(len(h.path), "hop"), strings.Join(stops, " → "))}
	if h.findings != nil {
		lines = append(lines, "  the cluster runs "+h.from.String()+" ("+describeFindings(h.findings)+")")
	} else {
		lines = append(lines, "  the cluster runs "+h.from.String()+" (--from)")
	}
	if h.kubernetes != nil {
		lines = append(lines, "  Kubernetes "+h.kubernetes.String())
	}
	if len(h.peers) > 0 {
		ps := make([]string, len(h.peers))
		for i, p := range h.peers {
			ps[i] = p.Name + " " + p.Version.String()
		}
		lines = append(lines, "  peers: "+strings.Join(ps, ", "))
	}
	if h.unchecked != "" {
		lines = append(lines, "  "+h.unchecked)
	}
	if passed := h.cat.Passed(h.from, h.path); len(passed) > 0 {
		vs := make([]string, len(passed))
		for i, v := range passed {
			vs[i] = v.String()
		}
		lines = append(lines, "  not stopped at: "+strings.Join(vs, ", ")+" (the path takes the fewest hops, each at its minor's latest patch)")
	}
	return lines
}

func describeFindings(fs []catalog.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}
