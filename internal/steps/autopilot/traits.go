package autopilot

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). Its one target, the Plan, is named by
// the kind; what autopilot then changes (every node's k0s) is no object a
// backup holds.
var Traits = step.Traits{NamesUpFront: true}
