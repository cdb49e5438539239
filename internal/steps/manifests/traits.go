package manifests

import "github.com/upshift-dev/upshift/internal/step"

// Traits of the kind (step.Traits). A manifests step applies its objects
// through the Applier; its sources name them. Its objects may be anything
// (a webhook, a namespace), so it is not confined.
var Traits = step.Traits{ApplierOnly: true, NamesUpFront: true}
