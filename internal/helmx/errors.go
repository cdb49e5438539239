package helmx

import (
	"errors"

	"helm.sh/helm/v3/pkg/storage/driver"
)

var (
	// ErrReleaseNotFound: no revision of the release exists in the namespace.
	// It is Helm's own driver.ErrReleaseNotFound, so errors.Is works with
	// either name.
	ErrReleaseNotFound = driver.ErrReleaseNotFound

	// ErrOperationInProgress: the release's last revision is pending
	// (pending-install, pending-upgrade or pending-rollback). Another Helm
	// operation is running, or one was interrupted; Helm refuses to act until
	// an operator (or a rollback) resolves it.
	ErrOperationInProgress = errors.New("another Helm operation is in progress on this release")
)
