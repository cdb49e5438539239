// Package v1alpha1 holds the Upshift API: UpgradePlan, the plan the CLI
// reads from a file and the controller reads from the cluster (one schema
// for both), and UpgradeRun, the record of one execution of a plan.
//
// The kubebuilder markers on these types are the CRDs' schema: controller-gen
// generates zz_generated.deepcopy.go and config/crd/bases from them (`make
// generate`; a test fails when the committed files differ from a fresh
// generation). The markers hold what can be checked without a cluster
// (one kind per step and gate, one source, unique names, durations, bounded
// lists) with the CLI's messages where the CLI says the same; internal/plan
// checks the rest (files, URLs, selectors, image references) and is what the
// CLI runs.
//
// +kubebuilder:object:generate=true
// +groupName=upshift.dev
package v1alpha1

// GroupVersion of the plan format.
const (
	Group      = "upshift.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	PlanKind   = "UpgradePlan"
)
