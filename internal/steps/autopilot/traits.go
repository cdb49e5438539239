package autopilot

import (
	"time"

	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultTimeout bounds an autopilot step that sets none: autopilot moves
// the nodes one at a time, each a k0s restart.
const DefaultTimeout = 30 * time.Minute

// Traits of the kind (step.Traits). It has no target a backup could hold:
// what autopilot changes (every node's k0s) is no object, and its Plan is
// the Reverter's to delete, never a backup's to bring back.
var Traits = step.Traits{NamesUpFront: true, Timeout: DefaultTimeout}
