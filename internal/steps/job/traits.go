package job

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A job step's Job writes whatever its
// container does.
var Traits = step.Traits{}
