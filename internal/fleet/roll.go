package fleet

import (
	"fmt"
	"slices"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// roll moves the current wave, and passes to the next once the current
// is done, soaked and approved.
func (x *decider) roll() {
	w := slices.IndexFunc(x.sp.Waves, func(ws WaveSpec) bool { return ws.Name == x.st.Wave })
	if w < 0 {
		w = 0
		x.st.Wave = x.sp.Waves[0].Name
	}
	for {
		ws := x.sp.Waves[w]
		members := x.sp.members(w)
		if !x.allDone(members) {
			x.st.Phase = v1alpha1.FleetProgressing
			x.rollWave(w, members)
			if !x.allDone(members) {
				return
			}
		}
		if x.st.WaveDoneAt == nil {
			x.st.WaveDoneAt = x.now()
			x.event(false, ReasonWaveDone, "wave %s is done (%s), each at its version and serving", ws.Name, clusters(len(members)))
		}
		if ws.Soak > 0 {
			if !x.soaked(ws, members) {
				return
			}
		}
		last := w == len(x.sp.Waves)-1
		if last {
			x.st.Phase, x.st.Message = v1alpha1.FleetSucceeded, ""
			x.event(false, ReasonSucceeded, "every cluster runs its version and serves")
			return
		}
		if ws.Approval && x.st.HandledActions[annotationApprove] != ws.Name {
			if x.o.Approve != ws.Name {
				x.st.Phase = v1alpha1.FleetWaitingForApproval
				x.st.Message = fmt.Sprintf("wave %s is done: annotate upshift.dev/approve=%s to start wave %s", ws.Name, ws.Name, x.sp.Waves[w+1].Name)
				return
			}
			x.handled(annotationApprove)
			x.event(false, ReasonWaveApproved, "wave %s approved", ws.Name)
		}
		w++
		x.st.Wave, x.st.WaveDoneAt, x.st.Message = x.sp.Waves[w].Name, nil, ""
		x.event(false, ReasonWaveStarted, "wave %s starts: %s", x.sp.Waves[w].Name, clusters(len(x.sp.members(w))))
	}
}

func (x *decider) allDone(members []int) bool {
	for _, i := range members {
		if x.entry(i).Phase != v1alpha1.ClusterDone {
			return false
		}
	}
	return true
}

// soaked tells whether a done wave has served its soak out. A cluster of
// it that stops serving meanwhile fails the rollout (a regression).
func (x *decider) soaked(ws WaveSpec, members []int) bool {
	x.st.Phase = v1alpha1.FleetSoaking
	for _, i := range members {
		e := x.entry(i)
		if !x.fresh(e.ID) {
			x.need(e.ID)
			continue
		}
		if !e.InService || !e.Available {
			e.Phase = v1alpha1.ClusterFailed
			e.Message = fmt.Sprintf("stopped serving during wave %s's soak (in service %t, available %t)", ws.Name, e.InService, e.Available)
			x.event(true, ReasonRegression, "cluster %s %s", e.ID, e.Message)
			x.failures()
			if x.st.Phase == v1alpha1.FleetReverting {
				x.revert()
			}
			return false
		}
	}
	left := x.st.WaveDoneAt.Add(ws.Soak).Sub(x.o.Now)
	if left > 0 {
		x.st.Message = fmt.Sprintf("wave %s soaks until %s", ws.Name, x.st.WaveDoneAt.Add(ws.Soak).UTC().Format("15:04:05"))
		x.requeue(min(left, soakPoll))
		return false
	}
	return true
}

// rollWave moves the wave's clusters in flight, then starts pending ones
// within the wave's limits.
func (x *decider) rollWave(w int, members []int) {
	ws := x.sp.Waves[w]
	x.st.Message = ""
	inFlight := 0
	for _, i := range members {
		if x.entry(i).Phase == v1alpha1.ClusterUpgrading {
			x.advance(i)
		}
		// Counted after its step: a cluster done now frees its slot now.
		if x.entry(i).Phase == v1alpha1.ClusterUpgrading {
			inFlight++
		}
	}
	if inFlight >= ws.MaxConcurrency {
		return
	}
	// maxUnavailable counts every cluster of the wave not serving, for
	// whatever reason: it needs them all read.
	if !x.o.AllStatuses {
		x.d.Need.AllStatuses = true
		return
	}
	unavailable := 0
	for _, i := range members {
		if e := x.entry(i); !e.InService || !e.Available || x.leaving[e.ID] {
			unavailable++
		}
	}
	asked := 0
	for _, i := range members {
		e := x.entry(i)
		if e.Phase != v1alpha1.ClusterPending || inFlight >= ws.MaxConcurrency {
			continue
		}
		if _, answered := x.o.Answers[e.ID]; answered {
			x.requeue(WaitPoll) // it waits; the next ones may go
			continue
		}
		if !x.fresh(e.ID) {
			// Read a slot's worth ahead: a cluster at its version already
			// takes no slot, so more may be read next time.
			if asked < ws.MaxConcurrency-inFlight {
				x.need(e.ID)
				asked++
			}
			continue
		}
		if x.atTarget(i) && e.InService && e.Available {
			e.Phase, e.FinishedAt, e.Message = v1alpha1.ClusterDone, x.now(), "already at its version"
			continue
		}
		serving := e.InService && e.Available
		if serving && unavailable >= ws.MaxUnavailable {
			// A cluster not serving already (left out by a halted
			// rollout, down) adds nothing unavailable: it may still
			// start. The wait is said once, for the fleet: a line per
			// waiting cluster would rewrite thousands of them whenever
			// the count moves.
			x.st.Message = fmt.Sprintf("wave %s has %s unavailable, its maxUnavailable: the next clusters wait", ws.Name, clusters(unavailable))
			continue
		}
		e.Phase, e.StartedAt, e.Message = v1alpha1.ClusterUpgrading, x.now(), ""
		inFlight++
		if serving {
			unavailable++
		}
		x.advance(i)
	}
}

// atTarget tells whether the cluster's control plane and every node pool
// run the version the spec gives it.
func (x *decider) atTarget(i int) bool {
	e, want := x.entry(i), x.sp.Clusters[i].Version
	if e.Master != want {
		return false
	}
	for _, p := range e.NodePools {
		if p.Version != want {
			return false
		}
	}
	return true
}

// advance moves an upgrading cluster one step, in the multicluster
// operator's order.
func (x *decider) advance(i int) {
	e, want := x.entry(i), x.sp.Clusters[i].Version
	if e.Operation != nil {
		return
	}
	if !x.fresh(e.ID) {
		x.need(e.ID)
		return
	}
	switch {
	case !x.atTarget(i):
		if e.Previous == nil {
			e.Previous = recorded(e)
		}
		switch {
		case e.InService:
			x.serviceOut(i)
		case e.Master != want:
			x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionUpgradeMaster, Version: want})
		default:
			for _, p := range e.NodePools {
				if p.Version != want {
					x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionUpgradeNodePool, NodePool: p.ID, Version: want})
					break
				}
			}
		}
	case !e.Available:
		e.Message = "runs its version; waiting for the plugin to say it is available"
		x.requeue(WaitPoll)
	case x.memberDue(e):
		// Recorded here too: a cluster that was at its version but not
		// serving changes only by its member run, which a revert undoes.
		if e.Previous == nil {
			e.Previous = recorded(e)
		}
		if e.InService {
			x.serviceOut(i)
			return
		}
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionUpgradeMember, Version: want})
	case !e.InService:
		x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionServiceIn})
	default:
		e.Phase, e.FinishedAt, e.Message = v1alpha1.ClusterDone, x.now(), ""
		took := ""
		if e.StartedAt != nil {
			took = fmt.Sprintf(" (took %s)", x.o.Now.Sub(e.StartedAt.Time).Round(1e9))
		}
		x.event(false, ReasonClusterUpgraded, "cluster %s runs %s and serves%s", e.ID, want, took)
	}
}

// serviceOut takes the cluster out of service if the others serving stay
// at requiredAvailableCount, else says why it waits.
func (x *decider) serviceOut(i int) {
	e := x.entry(i)
	if !x.o.AllStatuses {
		x.d.Need.AllStatuses = true
		return
	}
	others := 0
	for j := range x.st.Clusters {
		if f := x.entry(j); j != i && serves(f) && !x.leaving[f.ID] {
			others++
		}
	}
	if others < x.sp.Required {
		// The multicluster operator's message, so its alerts still match.
		msg := fmt.Sprintf("can't service out. currently available clusters less than required available count: %d", x.sp.Required)
		if e.Message != msg {
			x.event(true, ReasonClusterUnavailable, "cluster %s: %s", e.ID, msg)
		}
		e.Message = msg
		x.requeue(WaitPoll)
		return
	}
	x.leaving[e.ID] = true
	x.call(Call{Cluster: e.ID, Action: v1alpha1.ActionServiceOut})
}

// serves tells whether a cluster counts toward the availability budget:
// routed to, available, no operation of ours on it (one whose answer was
// lost included), and not between two of ours (a cluster upgrading or
// reverting is on its way out of service or not yet back).
func serves(e *v1alpha1.FleetClusterStatus) bool {
	moving := e.Phase == v1alpha1.ClusterUpgrading || e.Phase == v1alpha1.ClusterReverting
	return e.InService && e.Available && e.Operation == nil && !moving
}

func (x *decider) call(c Call) { x.d.Calls = append(x.d.Calls, c) }

func recorded(e *v1alpha1.FleetClusterStatus) *v1alpha1.RecordedVersions {
	return &v1alpha1.RecordedVersions{Master: e.Master, NodePools: slices.Clone(e.NodePools)}
}

// clusterVersion is a recorded version as the plugin's type.
func clusterVersion(r *v1alpha1.RecordedVersions) *pluginsdk.ClusterVersion {
	v := &pluginsdk.ClusterVersion{Master: r.Master}
	for _, p := range r.NodePools {
		v.NodePools = append(v.NodePools, pluginsdk.NodePoolVersion{ID: p.ID, Version: p.Version})
	}
	return v
}

// clusters counts clusters in words.
func clusters(n int) string {
	if n == 1 {
		return "1 cluster"
	}
	return fmt.Sprintf("%d clusters", n)
}
