package recreate

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A recreate step deletes and creates
// through its own client, and finds its objects by selector.
var Traits = step.Traits{}
