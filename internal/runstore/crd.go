package runstore

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/crds"
)

// EnsureCRD makes sure the UpgradeRun CRD is installed, Established and
// the one this binary embeds, installing or updating it when not (see
// internal/crds), once per Store. It returns what it did, for the
// driver to report ("installed CRD upgraderuns.upshift.dev"), or "" when
// it wrote nothing. When the caller may not install it, the error wraps
// crds.ErrForbidden, names the permission and the fix, and nothing was
// changed. A caller that may not read CRDs is trusted when the resource
// answers.
func (s *Store) EnsureCRD(ctx context.Context) (string, error) {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.crdOK {
		return "", nil
	}
	var outcome crds.Found
	err := retry(ctx, func(int) error {
		var err error
		outcome, err = crds.Ensure(ctx, s.crds, crd.UpgradeRuns)
		return err
	})
	if err != nil {
		return "", err
	}
	if outcome == crds.Unchecked {
		err := retry(ctx, func(int) error {
			return s.runs.Get().Namespace(s.namespace).Resource(Resource).Param("limit", "1").Do(ctx).Error()
		})
		switch {
		case noResource(err):
			return "", fmt.Errorf("%w: CRD %s is not installed, and this user may neither read nor install CRDs (customresourcedefinitions.apiextensions.k8s.io, cluster scope): a cluster admin can install it with `%s`; nothing was changed",
				crds.ErrForbidden, crd.UpgradeRuns, crds.FixCommand)
		case err != nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err):
			return "", fmt.Errorf("check that CRD %s is installed: %w", crd.UpgradeRuns, err)
		}
		// Served (or the namespace is missing yet): go on; a write the
		// user may not make says so itself.
	}
	s.crdOK = true
	return outcome.Notice(crd.UpgradeRuns), nil
}

// CheckCRD learns, reading only, whether the UpgradeRun CRD is current;
// when it is, EnsureCRD has nothing left to ask. A driver calls it while
// it waits on other reads (preflight's), so that the apply after them
// starts with the lease. It writes nothing: a plan refused by preflight
// leaves the cluster as it was. A CRD changed by someone else between the
// check and the run's first write of a record is met then: the write
// fails and says why.
func (s *Store) CheckCRD(ctx context.Context) {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.crdOK {
		return
	}
	if ok, err := crds.IsCurrent(ctx, s.crds, crd.UpgradeRuns); err == nil && ok {
		s.crdOK = true
	}
}
