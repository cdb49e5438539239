package distribute

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits): its targets depend on the nodes
// there are when it runs, so none is assumed.
var Traits = step.Traits{}
