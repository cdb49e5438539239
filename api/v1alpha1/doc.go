// Package v1alpha1 holds the UpgradePlan types: the plan YAML that the CLI
// reads today is the same schema the UpgradePlan custom resource will serve.
//
// Not yet done: deepcopy functions and the CRD manifest (controller-gen)
// come with the controller; until then these are plain Go types.
package v1alpha1

// GroupVersion of the plan format.
const (
	Group      = "upshift.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	PlanKind   = "UpgradePlan"
)
