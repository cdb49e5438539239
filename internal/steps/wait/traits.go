package wait

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). Approval and pause steps change
// nothing and name nothing. The gates after them list rather than fence
// on answers older than the wait, which may be long.
var Traits = step.Traits{NamesUpFront: true}
