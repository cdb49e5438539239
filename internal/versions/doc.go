// Package versions finds the upgrade path of a platform through the
// releases of its catalog: which versions to stop at, hop by hop, from
// the version a cluster runs to the one asked for. Path is a pure function;
// the catalog's loading, version detection and the hops' runs are built on
// it elsewhere.
//
// The rules Path keeps, each one a reason a path can be refused
// (NoPathError.Rule names it):
//
//   - Versions are semantic versions (Masterminds/semver; "v1.1.0" reads
//     as 1.1.0). A pre-release is a stop only when it is the target.
//   - Install: with no current version the path is the target alone,
//     checked against Kubernetes and the peers as every stop is.
//   - No downgrade: a target below the current version is refused unless
//     downgrades are asked for; a downgrade is then one hop, checked
//     against the same constraints.
//   - Never skip a minor: a hop goes within its minor or to the next minor
//     the catalog lists (1.1.x → 1.2.y, 1.9.x → 2.0.y when the catalog has
//     no 1.10), unless the release hopped to allows coming from the
//     current version (Release.AllowFrom: "upgrades from 1.1 and 1.2 are
//     supported").
//   - Patches may be skipped: among the releases a hop may reach, the path
//     takes the fewest hops and, between paths as short, the highest
//     versions at each stop (the latest patch of each minor).
//   - Required stops are kept: no hop jumps over a release marked
//     RequiredStop (a data migration that must run on its own).
//   - Kubernetes: every release stopped at must accept the Kubernetes
//     version the cluster runs there (Release.Kubernetes): the cluster's,
//     until a release stopped at installs Kubernetes (a distribution
//     that bundles it, Release.InstallsKubernetes); from that stop on,
//     the version it installs. A release's range is checked against what
//     it installs itself. So the path is searched over pairs of a
//     release and the Kubernetes the cluster runs there, and may stop at
//     a release that installs Kubernetes where a higher patch would not.
//   - Kubernetes skip (kubernetes-skip): a hop moves Kubernetes one minor
//     up at most (a control plane upgrade skips no minor), never down
//     unless downgrades are asked for, and then one minor at most.
//     Patches move freely. Not checked while the cluster's version is
//     unknown.
//   - Peers: every release stopped at must accept the version of every
//     peer cluster (Release.Peers), the lowest peer being the first to
//     fail; the error names the peer.
package versions
