package preflight

import (
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
