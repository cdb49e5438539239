package versions

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// Kubernetes reads a cluster's version as discovery reports it
// ("v1.34.4", "v1.30.2-eks-1552ad0", "v1.29.3+k3s1") as the release it
// is: the distribution's pre-release and build suffixes dropped, or no
// version range would accept it (a range excludes pre-releases).
func Kubernetes(gitVersion string) (*semver.Version, error) {
	v, err := semver.NewVersion(gitVersion)
	if err != nil {
		return nil, fmt.Errorf("the cluster's Kubernetes version %q is not a semantic version: %w", gitVersion, err)
	}
	return semver.New(v.Major(), v.Minor(), v.Patch(), "", ""), nil
}
