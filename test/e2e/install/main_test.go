// Package install_test installs Upshift's Helm chart (charts/upshift) on
// the real local control plane with Helm's SDK, as `helm install` does,
// and checks what it grants: a token of the chart's ServiceAccount (the
// TokenRequest API, as `kubectl create token`) may do exactly what the
// controller needs, and nothing of what it must not.
//
// The controller's own end-to-end tests can start `upshift controller`
// here with that token (installChart, then serviceAccountConfig): it then
// runs with the rights the chart grants, no more.
package install_test

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// testTimeout bounds each test as a whole.
	testTimeout = 2 * time.Minute
	// repoRoot is three directories up.
	repoRoot = "../../.."
)
