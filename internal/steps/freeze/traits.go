package freeze

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A freeze writes admission policies
// that change how every write of the cluster is judged.
var Traits = step.Traits{}
