package installation

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits): no targets, nothing kept.
var Traits = step.Traits{NamesUpFront: true}
