package clusterconfig

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits): one target, named by the spec, and
// nothing kept besides it. k0s acts on the new config across the cluster,
// so nothing is Confined.
var Traits = step.Traits{NamesUpFront: true}
