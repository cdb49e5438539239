package image

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). An image step patches its workload
// through the Applier, changes nothing but its pod template (and what the
// rollout does), and names its workload in its spec.
var Traits = step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}
