package upgrade

import (
	"context"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/apiscan"
	"github.com/upshift-dev/upshift/internal/clients"
)

// RemovedAPIsError: hop Release installs a Kubernetes minor (To) above
// the one the cluster runs (From), and the cluster holds objects written
// in API versions To no longer serves, or kinds the scan could not check;
// nothing of that hop was written. Report's lines say each.
type RemovedAPIsError struct {
	// Name is the hop's plan, as PreflightError's.
	Name     string
	Release  *semver.Version
	From, To *semver.Version
	Report   *apiscan.Report
}

func (e *RemovedAPIsError) Error() string {
	return fmt.Sprintf("%s: the release installs Kubernetes %s (the cluster runs %s): %d object(s) in API versions %d.%d no longer serves, %d that could not be checked",
		e.Name, e.To, e.From, len(e.Report.Findings), e.To.Major(), e.To.Minor(), len(e.Report.Problems))
}

// KubernetesAt is the Kubernetes the cluster runs when hop i starts: what
// the last release stopped at before it installed, else the cluster's;
// nil when unknown (no cluster).
func (s *Solution) KubernetesAt(i int) *semver.Version {
	for j := i - 1; j >= 0; j-- {
		if k := s.Path[j].InstallsKubernetes; k != nil {
			return k
		}
	}
	return s.Kubernetes
}

// NewKubernetesMinor tells whether hop i's release installs a Kubernetes
// minor above the one the cluster runs as the hop starts (from), and
// which (to). Unknown without a cluster.
func (s *Solution) NewKubernetesMinor(i int) (from, to *semver.Version, ok bool) {
	from, to = s.KubernetesAt(i), s.Path[i].InstallsKubernetes
	if from == nil || to == nil {
		return nil, nil, false
	}
	return from, to, to.Major() > from.Major() || to.Major() == from.Major() && to.Minor() > from.Minor()
}

// ScanRemovedAPIs scans the cluster before hop i (its plan called name)
// when the hop brings a new Kubernetes minor: a *RemovedAPIsError when
// the scan finds objects in API versions that minor no longer serves or
// cannot check some. Otherwise it says what was scanned ("" when the hop
// brings no minor). The scan reads the cluster as it is: for a later
// hop, once the hops before it have run.
func ScanRemovedAPIs(ctx context.Context, cs *clients.Set, s *Solution, i int, name string) (string, error) {
	from, to, ok := s.NewKubernetesMinor(i)
	if !ok {
		return "", nil
	}
	if to.Major() != 1 {
		return "", fmt.Errorf("%s: release %s installs Kubernetes %s: Upshift knows the API removals of Kubernetes 1.x only", name, s.Path[i].Version, to)
	}
	rep, err := apiscan.Scan(ctx, cs, int(to.Minor()))
	if err != nil {
		return "", fmt.Errorf("%s: scan for API versions Kubernetes %s no longer serves: %w", name, to, err)
	}
	if rep.Blocks() {
		return "", &RemovedAPIsError{Name: name, Release: s.Path[i].Version, From: from, To: to, Report: rep}
	}
	return fmt.Sprintf("release %s installs Kubernetes %s (the cluster runs %s): no object is in an API version %d.%d no longer serves (last-applied annotations and Helm releases scanned)",
		s.Path[i].Version, to, from, to.Major(), to.Minor()), nil
}
