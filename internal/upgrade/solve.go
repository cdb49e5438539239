package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/versions"
)

// Request is where to go.
type Request struct {
	Target *semver.Version
	// From replaces detection: the version the cluster runs.
	From *semver.Version
	// Install: nothing is installed; the target's plan alone.
	Install bool
	// AllowDowngrade allows a target below the running version.
	AllowDowngrade bool
}

// Solution is a solved upgrade: where the cluster is, the path, and what
// was read to find it.
type Solution struct {
	Catalog *catalog.Catalog
	// From is nil for an install.
	From, To *semver.Version
	// Findings are what the version sources said; nil when Request.From
	// gave the version.
	Findings []catalog.Finding
	// Kubernetes is the cluster's version; nil without a cluster.
	Kubernetes *semver.Version
	Peers      []versions.Peer
	// Unchecked says what could not be checked without a cluster.
	Unchecked string
	// ValuesRead are the catalog's values read from the cluster
	// (spec.valuesFrom), each with where.
	ValuesRead []string
	// UncheckedPeers are peers the cluster knows that have no kubeconfig
	// Secret, where the catalog says to warn (spec.peers.expected.missing).
	UncheckedPeers []string
	Path           []versions.Release
}

// Errors Solve returns for a driver to add its own way out to.
var (
	// ErrNoCluster: detection, peers or the matrix need a cluster and
	// there is none.
	ErrNoCluster = errors.New("no cluster to read the running version from")
	// ErrNoDetect: the catalog names no version source and the request
	// gives no version.
	ErrNoDetect = errors.New("the catalog names no version source (spec.detect)")
)

// InstalledError: an install asked for, and the platform found.
type InstalledError struct {
	Version  *semver.Version
	Findings []catalog.Finding
}

func (e *InstalledError) Error() string {
	return fmt.Sprintf("the cluster runs %s already (%s)", e.Version, DescribeFindings(e.Findings))
}

// Solve reads where the cluster is (the version sources, or req.From),
// its Kubernetes version, its peers and the compatibility matrix, and
// finds the path to req.Target. cs is nil without a cluster: then only
// req.From or an install can be solved, and peers are not checked.
// Detection errors are *catalog.DetectError (errors.Is
// catalog.ErrNothingInstalled when nothing is found).
func Solve(ctx context.Context, cat *catalog.Catalog, cs *clients.Set, req Request) (*Solution, error) {
	s := &Solution{Catalog: cat, To: req.Target}
	switch {
	case req.From != nil:
		s.From = req.From
	case cs == nil && req.Install:
	case cs == nil:
		return nil, ErrNoCluster
	case len(cat.Spec.Detect) == 0 && req.Install:
	case len(cat.Spec.Detect) == 0:
		return nil, ErrNoDetect
	default:
		findings, v, err := Detect(ctx, cat, cs)
		s.Findings = findings
		switch {
		case req.Install && errors.Is(err, catalog.ErrNothingInstalled):
		case req.Install && err == nil:
			return nil, &InstalledError{Version: v, Findings: findings}
		case err != nil:
			return nil, err
		default:
			s.From = v
		}
	}
	if cs != nil {
		info, err := cs.Clientset.Discovery().ServerVersion()
		if err != nil {
			return nil, fmt.Errorf("read the cluster's Kubernetes version: %w", err)
		}
		if s.Kubernetes, err = versions.Kubernetes(info.GitVersion); err != nil {
			return nil, err
		}
		if s.ValuesRead, err = cat.ReadValues(ctx, cs); err != nil {
			return nil, err
		}
		peers, problems, unchecked, err := cat.ReadPeers(ctx, cs)
		if err != nil {
			return nil, err
		}
		if len(problems) > 0 {
			return nil, &PeersError{Problems: problems}
		}
		s.Peers, s.UncheckedPeers = peers, unchecked
	} else {
		var not []string
		if cat.Spec.Peers != nil || cat.Spec.Compatibility != nil {
			not = append(not, "peers and the compatibility matrix not checked")
		}
		if len(cat.Spec.ValuesFrom) > 0 {
			not = append(not, "values not read from the cluster (spec.valuesFrom): their defaults are used")
		}
		if len(not) > 0 {
			s.Unchecked = strings.Join(not, "; ") + ": no cluster"
		}
	}
	path, err := cat.Path(versions.Request{Current: s.From, Target: s.To, Kubernetes: s.Kubernetes, Peers: s.Peers, AllowDowngrade: req.AllowDowngrade})
	if err != nil {
		return nil, err
	}
	if cs != nil {
		matrix, where, err := cat.ReadMatrix(ctx, cs)
		if err != nil {
			return nil, err
		}
		if matrix != nil {
			if err := matrix.CheckPath(s.From, path, s.Peers); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	s.Path = path
	return s, nil
}

// PeersError lists the peers whose versions could not be read: each
// blocks, as skew cannot be checked against a peer nobody can see.
type PeersError struct{ Problems []catalog.PeerProblem }

func (e *PeersError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	n, them := "1 peer", "it"
	if len(e.Problems) > 1 {
		n, them = fmt.Sprintf("%d peers", len(e.Problems)), "them"
	}
	return fmt.Sprintf("cannot read the version of %s, so the upgrade cannot be checked against %s:\n  %s", n, them, strings.Join(lines, "\n  "))
}

// Detect reads the catalog's version sources and the one version they
// agree on.
func Detect(ctx context.Context, cat *catalog.Catalog, cs *clients.Set) ([]catalog.Finding, *semver.Version, error) {
	findings := catalog.Detect(ctx, cs, cat.Spec.Detect)
	v, err := catalog.Agree(findings)
	return findings, v, err
}

// HopFrom is the version hop i starts from; nil for an install.
func (s *Solution) HopFrom(i int) *semver.Version {
	if i == 0 {
		return s.From
	}
	return s.Path[i-1].Version
}

// HopName names hop i: "1.0.0 → 1.1.0", "install 1.0.0".
func (s *Solution) HopName(i int) string {
	if from := s.HopFrom(i); from != nil {
		return fmt.Sprintf("%s → %s", from, s.Path[i].Version)
	}
	return "install " + s.Path[i].Version.String()
}

// Plan is hop i's plan, validated.
func (s *Solution) Plan(ctx context.Context, i int) (*plan.Loaded, error) {
	return s.Catalog.PlanFor(ctx, s.Path[i].Version, s.HopFrom(i))
}

// Describe is the path in a line and what was read to find it, for
// people.
func (s *Solution) Describe() []string {
	if s.From == nil {
		return append([]string{fmt.Sprintf("catalog %s: install %s (nothing installed)", s.Catalog.Where, s.To)}, s.peersWarning()...)
	}
	stops := make([]string, len(s.Path))
	for i, r := range s.Path {
		stops[i] = r.Version.String()
	}
	first := fmt.Sprintf("catalog %s: from %s to %s in %d %s: %s", s.Catalog.Where, s.From, s.To, len(s.Path), plural(len(s.Path), "hop"), strings.Join(stops, " → "))
	if len(s.Path) == 0 {
		first = fmt.Sprintf("catalog %s: the cluster runs %s already: nothing to do", s.Catalog.Where, s.To)
	}
	lines := []string{first}
	if s.Findings != nil {
		lines = append(lines, "  the cluster runs "+s.From.String()+" ("+DescribeFindings(s.Findings)+")")
	} else {
		lines = append(lines, "  the cluster runs "+s.From.String()+" (as given)")
	}
	if s.Kubernetes != nil {
		lines = append(lines, "  Kubernetes "+s.Kubernetes.String())
	}
	for _, r := range s.Path {
		if r.InstallsKubernetes != nil {
			lines = append(lines, fmt.Sprintf("  %s installs Kubernetes %s", r.Version, r.InstallsKubernetes))
		}
	}
	if len(s.Peers) > 0 {
		ps := make([]string, len(s.Peers))
		for i, p := range s.Peers {
			ps[i] = p.Name + " " + p.Version.String()
		}
		lines = append(lines, "  peers: "+strings.Join(ps, ", "))
	}
	if s.Unchecked != "" {
		lines = append(lines, "  "+s.Unchecked)
	}
	lines = append(lines, s.peersWarning()...)
	if len(s.ValuesRead) > 0 {
		lines = append(lines, "  values from the cluster: "+strings.Join(s.ValuesRead, ", "))
	}
	if passed := s.Catalog.Passed(s.From, s.Path); len(passed) > 0 {
		vs := make([]string, len(passed))
		for i, v := range passed {
			vs[i] = v.String()
		}
		lines = append(lines, "  not stopped at: "+strings.Join(vs, ", ")+" (the path takes the fewest hops, each at its minor's latest patch)")
	}
	return lines
}

// peersWarning names the peers not checked, if any.
func (s *Solution) peersWarning() []string {
	if len(s.UncheckedPeers) == 0 {
		return nil
	}
	return []string{"  warning: peers not checked, no kubeconfig Secret (spec.peers.expected.missing: Warn): " + strings.Join(s.UncheckedPeers, ", ")}
}

// DescribeFindings is what every version source said, in a line.
func DescribeFindings(fs []catalog.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// VersionString is v as text, "" for none (an install's start).
func VersionString(v *semver.Version) string {
	if v == nil {
		return ""
	}
	return v.String()
}
