package fleet

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// WaitPoll is how soon a cluster that is not available yet, or a budget
// that holds a cluster back, is looked at again.
const WaitPoll = 5 * time.Second

// soakPoll is how often a soaking wave is checked for a cluster that
// stopped serving.
const soakPoll = 10 * time.Second

// decider holds one decision being made.
type decider struct {
	sp Spec
	o  Observed
	st *v1alpha1.ClusterVersionStatus
	d  *Decision
	// leaving are clusters this decision takes out of service: the
	// budget of the next ones counts them gone.
	leaving map[string]bool
}

// Decide returns what to record and do next for a fleet. Rules, in
// order:
//
//  1. A new generation starts a new rollout: every cluster without an
//     operation in flight goes back to Pending, its recorded versions
//     forgotten; the first wave rolls.
//  2. What was read is recorded; operations that ended are taken in:
//     done (the cluster moves on), failed (the cluster fails; event
//     OperationFailed), unknown to the plugin (decided again from the
//     cluster's versions).
//  3. A failed cluster halts the rollout (Halted), or with onFailure
//     Revert starts taking back the clusters it changed (Reverting). A
//     failed revert stops it (RevertFailed). upshift.dev/retry goes on:
//     from Halted forward, from RevertFailed with the revert, from
//     Reverted with a new rollout.
//  4. Suspended: nothing starts; operations in flight are followed.
//  5. Rolling: the current wave's clusters move, each in the
//     multicluster operator's order (service out, control plane, node
//     pools, available, service in), up to the wave's maxConcurrency and
//     maxUnavailable; a cluster leaves service only while the others
//     serving number requiredAvailableCount, else it waits (event
//     ClusterUnavailable). A done wave soaks (a cluster that stops
//     serving then is a failure), waits for its approval, and the next
//     wave rolls.
//  6. Reverting: the changed clusters go back one at a time, last first:
//     service out, RevertCluster (or node pools then control plane, so no
//     kubelet is newer than its API server), available, service in.
//
// Decide never calls the plugin: what it lacks it asks for in Need, and
// it decides nothing for a cluster it lacks news of.
func Decide(sp Spec, prev v1alpha1.ClusterVersionStatus, o Observed) Decision {
	d := &Decision{}
	st := prev.DeepCopy()
	x := &decider{sp: sp, o: o, st: st, d: d, leaving: map[string]bool{}}
	x.align()
	x.observe()
	x.takeLookups()
	x.takeEnded()
	x.retry()
	x.failures()
	if !sp.Suspend && st.Phase == v1alpha1.FleetSuspended {
		st.Phase, st.Message = v1alpha1.FleetProgressing, ""
	}
	switch {
	case sp.Suspend:
		x.suspend()
	case st.Phase == v1alpha1.FleetReverting:
		x.revert()
	case st.Phase == v1alpha1.FleetProgressing || st.Phase == v1alpha1.FleetSoaking || st.Phase == v1alpha1.FleetWaitingForApproval:
		x.roll()
	}
	x.count()
	setConditions(st, o.Now)
	d.Status = *st
	return *d
}

func (x *decider) entry(i int) *v1alpha1.FleetClusterStatus { return &x.st.Clusters[i] }

// align gives every cluster of the spec its entry, in spec order, and
// starts a new rollout when the spec changed.
func (x *decider) align() {
	old := map[string]v1alpha1.FleetClusterStatus{}
	for _, e := range x.st.Clusters {
		old[e.ID] = e
	}
	x.st.Clusters = make([]v1alpha1.FleetClusterStatus, len(x.sp.Clusters))
	for i, c := range x.sp.Clusters {
		e, ok := old[c.ID]
		if !ok {
			e = v1alpha1.FleetClusterStatus{ID: c.ID, Phase: v1alpha1.ClusterPending}
		}
		e.Wave = x.sp.Waves[c.Wave].Name
		x.st.Clusters[i] = e
	}
	x.st.Desired = int32(len(x.sp.Clusters))
	if x.st.ObservedGeneration != x.o.Generation || x.st.Phase == "" {
		x.st.ObservedGeneration = x.o.Generation
		// Only a new target is a new rollout: a suspend, or new wave
		// limits, go on with this one, its Previous versions and member
		// records kept for a revert.
		if target := x.sp.Target(); target != x.st.Target || x.st.Phase == "" {
			x.st.Target = target
			x.restart()
		}
	}
}

// restart begins a rollout: clusters without an operation in flight go
// back to Pending; the first wave rolls.
func (x *decider) restart() {
	for i := range x.st.Clusters {
		e := x.entry(i)
		if e.Operation != nil {
			continue
		}
		e.Phase, e.Previous, e.Member, e.Message, e.StartedAt, e.FinishedAt = v1alpha1.ClusterPending, nil, nil, "", nil, nil
	}
	x.st.Phase = v1alpha1.FleetProgressing
	x.st.Wave, x.st.WaveDoneAt, x.st.Message, x.st.Cause = x.sp.Waves[0].Name, nil, "", ""
}

// observe records what was read.
func (x *decider) observe() {
	for i := range x.st.Clusters {
		e := x.entry(i)
		if v, ok := x.o.Versions[e.ID]; ok {
			e.Master = v.Master
			e.NodePools = e.NodePools[:0]
			for _, p := range v.NodePools {
				e.NodePools = append(e.NodePools, v1alpha1.NodePoolStatus{ID: p.ID, Version: p.Version})
			}
		}
		if s, ok := x.o.Statuses[e.ID]; ok {
			e.InService = s.Service == pluginsdk.ServiceIn
			e.Available = s.Available
		}
		x.observeAnswers(e)
	}
}

// fresh tells whether the cluster's versions and status were read for
// this decision.
func (x *decider) fresh(id string) bool {
	_, v := x.o.Versions[id]
	_, s := x.o.Statuses[id]
	return v && s
}

func (x *decider) need(id string) {
	if _, answered := x.o.Answers[id]; answered {
		x.requeue(WaitPoll) // asked again next step, not at once
		return
	}
	for _, n := range x.d.Need.Clusters {
		if n == id {
			return
		}
	}
	x.d.Need.Clusters = append(x.d.Need.Clusters, id)
}

func (x *decider) event(warning bool, reason, format string, args ...any) {
	x.d.Events = append(x.d.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (x *decider) requeue(after time.Duration) {
	if x.d.RequeueAfter == 0 || after < x.d.RequeueAfter {
		x.d.RequeueAfter = after
	}
}

func (x *decider) now() *metav1.Time { t := metav1.NewTime(x.o.Now); return &t }

// takeEnded takes in the operations that ended.
func (x *decider) takeEnded() {
	for i := range x.st.Clusters {
		e := x.entry(i)
		op := e.Operation
		if op == nil || unconfirmed(op) {
			continue
		}
		r, ok := x.o.Ops[e.ID]
		if !ok {
			continue
		}
		switch r.Status {
		case pluginsdk.OperationRunning:
			// Progress is saved when its counts move, not each time a
			// plugin's free text does ("12s left"): a fleet's status is
			// large, and a save per poll of every operation in flight
			// would rewrite it for nothing.
			if p := progress(r); op.Progress == "" || counts(p) != counts(op.Progress) {
				op.Progress = p
			}
		case pluginsdk.OperationDone:
			x.d.Ended = append(x.d.Ended, Ended{Type: op.Type, OK: true})
			x.memberEnded(e, op, true)
			e.Operation, e.Message = nil, ""
			x.needFresh(e.ID)
		case pluginsdk.OperationFailed:
			x.d.Ended = append(x.d.Ended, Ended{Type: op.Type, OK: false})
			x.memberEnded(e, op, false)
			x.failed(e, op, r.Message)
		default:
			e.Operation = nil
			e.Message = fmt.Sprintf("the plugin does not know operation %s (%s) any more: deciding again from the cluster's versions", op.ID, op.Type)
			x.event(true, ReasonOperationLost, "cluster %s: %s", e.ID, e.Message)
			x.needFresh(e.ID)
		}
	}
}

// needFresh asks for the cluster's versions and status unless this
// decision has them.
func (x *decider) needFresh(id string) {
	if !x.fresh(id) {
		x.need(id)
	}
}

// failed records a failed operation: the cluster fails, and a failed
// revert stops the fleet's revert.
func (x *decider) failed(e *v1alpha1.FleetClusterStatus, op *v1alpha1.PluginOperation, why string) {
	msg := fmt.Sprintf("operation_type: %s, operation_id: %s", op.Type, op.ID)
	if why != "" {
		msg += ": " + why
	}
	x.event(true, ReasonOperationFailed, "cluster %s: %s", e.ID, msg)
	reverting := e.Phase == v1alpha1.ClusterReverting
	e.Operation = nil
	e.Phase = v1alpha1.ClusterFailed
	e.Message = fmt.Sprintf("%s failed: %s", op.Action, msg)
	if reverting && x.st.Phase == v1alpha1.FleetReverting {
		x.st.Phase = v1alpha1.FleetRevertFailed
		x.st.Message = fmt.Sprintf("the revert of cluster %s failed (%s): fix it and annotate upshift.dev/retry to go on reverting", e.ID, e.Message)
		x.event(true, ReasonHalted, "%s", x.st.Message)
	}
}

// counts is a progress's "done/total", "" when it has none.
func counts(progress string) string {
	c, _, found := strings.Cut(progress, ": ")
	if !found && !strings.Contains(c, "/") {
		return ""
	}
	return c
}

func progress(r pluginsdk.OperationReport) string {
	switch {
	case r.Total > 0 && r.Message != "":
		return fmt.Sprintf("%d/%d: %s", r.Done, r.Total, r.Message)
	case r.Total > 0:
		return fmt.Sprintf("%d/%d", r.Done, r.Total)
	}
	return r.Message
}
