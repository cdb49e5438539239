package step

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Traits are what a driver may assume of a kind without building its
// executor. Each kind declares its own (its package's Traits); the
// registry (internal/steps.TraitsOf) answers for a step of the plan.
type Traits struct {
	// ApplierOnly: every write of the kind goes through the run's
	// kube.Applier, so the answers to those writes are its last writes of
	// its objects, which the gates after it may fence on.
	ApplierOnly bool
	// Confined: the kind changes nothing but its targets and what its
	// executor's Reach names (a rollout's ReplicaSets and pods; how the
	// API server serves a CRD's kinds), so the next stage may be backed up
	// while it runs.
	Confined bool
	// NamesUpFront: the kind's targets are known from its spec and
	// sources, before anything runs, and it keeps no state in its stage's
	// backup besides them (no step.Keeper), so its stage may be backed up
	// ahead of its turn.
	NamesUpFront bool
	// Timeout is the kind's default timeout when its step sets none (zero:
	// the driver's default): an autopilot upgrade of every node takes
	// longer than a rollout.
	Timeout time.Duration
}

// Reach is what a Confined step changes besides its targets: the kinds
// its targets' controllers write (a rollout's ReplicaSets and pods) and
// the API groups whose serving it changes (a CRD's defaults, pruning and
// versions). A stage backed up while the step runs holds none of them.
type Reach struct {
	Kinds  []schema.GroupKind
	Groups []string
}

// Reacher is an executor of a Confined kind that changes more than its
// targets (Reach). A Confined executor that is no Reacher changes its
// targets alone.
type Reacher interface {
	Reach() Reach
}
