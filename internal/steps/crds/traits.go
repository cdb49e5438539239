package crds

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A crds step applies its CRDs through
// the Applier and changes nothing else but how their kinds are served; its
// sources name them.
var Traits = step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}
