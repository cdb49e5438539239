package fleet

import (
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Call is a plugin call that starts an operation.
type Call struct {
	Cluster string
	Action  v1alpha1.FleetAction
	// NodePool, for UpgradeNodePool.
	NodePool string
	// Version for an upgrade; To for a revert.
	Version string
	To      *pluginsdk.ClusterVersion
	// Run is the member run RollbackMember rolls back.
	Run string
	// RequestID is sent with the call and saved before it (intent.go).
	RequestID string
}

// Event is a Kubernetes event to emit on the ClusterVersion.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Ended is an operation that ended, for the metrics.
type Ended struct {
	Type string
	OK   bool
}

// Decision is what to record and do.
type Decision struct {
	Status v1alpha1.ClusterVersionStatus
	Calls  []Call
	Events []Event
	Ended  []Ended
	// Need: read these and decide again before acting.
	Need Need
	// Handled are the action annotations acted on, with their values.
	Handled map[string]string
	// RequeueAfter: look again then (a soak, a cluster coming up).
	RequeueAfter time.Duration
}

// Event reasons.
const (
	// The multicluster operator's reasons, with its messages.
	ReasonClusterUnavailable = "ClusterUnavailable"
	ReasonOperationFailed    = "OperationFailed"

	ReasonOperationLost = "OperationLost"

	ReasonClusterUpgraded  = "ClusterUpgraded"
	ReasonClusterReverted  = "ClusterReverted"
	ReasonWaveStarted      = "WaveStarted"
	ReasonWaveDone         = "WaveDone"
	ReasonWaveApproved     = "WaveApproved"
	ReasonRegression       = "Regression"
	ReasonHalted           = "Halted"
	ReasonReverting        = "Reverting"
	ReasonReverted         = "Reverted"
	ReasonSucceeded        = "Succeeded"
	ReasonRetried          = "Retried"
	ReasonMemberUpgraded   = "MemberUpgraded"
	ReasonMemberRolledBack = "MemberRolledBack"
)
