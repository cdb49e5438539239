package helm

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A helm step writes through Helm, names
// its objects only once its chart is rendered against the cluster, and
// keeps its release revision in its stage's backup.
var Traits = step.Traits{}
