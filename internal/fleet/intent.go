package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A call's intent is saved before the call is made: the cluster's
// operation with the call's request id and no operation id yet. The call
// carries the request id (pluginsdk.RequestIDKey), and its answer fills
// the operation id in. An intent still without an id on the next step is
// a call whose answer was lost: it timed out, or the controller stopped
// between the call and the save. Such a call is looked up, never sent
// again blindly: a second ServiceOut or UpgradeNodePool is a second
// operation, and until the lookup says, the cluster counts as not
// serving (serves).

// Lookup is what the plugin said of a call whose answer was lost.
type Lookup struct {
	// Op is the operation the call started: it is followed as if the
	// answer had come.
	Op pluginsdk.Operation
	// Again: the call never reached the plugin (FindOperation answered
	// NotFound), or starting it again is harmless (a member run resumes
	// where it is): the cluster is decided again from what it runs.
	Again bool
	// Unknown says why the plugin cannot tell (it does not serve
	// FindOperation): the cluster fails rather than risk a second
	// operation.
	Unknown string
}

// newRequestID is a call's request id: 16 random bytes, hex. Random, not
// derived from the fleet: fleets sharing a plugin must not collide, and a
// call decided again after a lost one is a new request.
func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// intend gives each call a request id and records it as its cluster's
// operation in flight, without an operation id yet.
func intend(st *v1alpha1.ClusterVersionStatus, calls []Call, now time.Time) {
	for i := range calls {
		c := &calls[i]
		c.RequestID = newRequestID()
		e := find(st, c.Cluster)
		if e == nil {
			continue
		}
		version := c.Version
		if c.To != nil {
			version = c.To.Master
		}
		e.Operation = &v1alpha1.PluginOperation{RequestID: c.RequestID, Action: c.Action, NodePool: c.NodePool, Version: version, StartedAt: metav1.NewTime(now)}
		e.Message = describe(*c)
	}
}

// unconfirmed tells an operation whose call's answer was not recorded.
func unconfirmed(op *v1alpha1.PluginOperation) bool { return op != nil && op.ID == "" }

// takeLookups takes in what the plugin said of the calls whose answers
// were lost.
func (x *decider) takeLookups() {
	for i := range x.st.Clusters {
		e := x.entry(i)
		op := e.Operation
		if !unconfirmed(op) {
			continue
		}
		l, ok := x.o.Lookups[e.ID]
		switch {
		case !ok:
			x.requeue(WaitPoll) // not asked this step (the plugin answered an error)
		case l.Op.ID != "":
			op.ID, op.Type = l.Op.ID, l.Op.Type
			x.requeue(time.Millisecond) // followed from the next step
		case l.Again:
			e.Operation, e.Message = nil, ""
			x.needFresh(e.ID)
		default:
			msg := fmt.Sprintf("%s was sent at %s but its answer was lost, and %s: check the cluster, then annotate upshift.dev/retry",
				op.Action, op.StartedAt.UTC().Format(time.RFC3339), l.Unknown)
			x.event(true, ReasonOperationLost, "cluster %s: %s", e.ID, msg)
			if e.Phase == v1alpha1.ClusterReverting && x.st.Phase == v1alpha1.FleetReverting {
				x.st.Phase, x.st.Message = v1alpha1.FleetRevertFailed, fmt.Sprintf("the revert of cluster %s failed (%s)", e.ID, msg)
			}
			e.Operation, e.Phase, e.Message = nil, v1alpha1.ClusterFailed, msg
		}
	}
}
