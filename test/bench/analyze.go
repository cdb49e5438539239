//go:build bench

package bench

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// window is the audit events of one client between two instants.
type window struct {
	user       string
	start, end time.Time
}

func (w window) events(all []localcluster.AuditEvent) []localcluster.AuditEvent {
	var out []localcluster.AuditEvent
	for _, e := range all {
		if e.User.Username == w.user && !e.RequestReceivedTimestamp.Before(w.start) && !e.RequestReceivedTimestamp.After(w.end) {
			out = append(out, e)
		}
	}
	return out
}

// span is the time from a client's first request to its last response.
func span(evs []localcluster.AuditEvent) time.Duration {
	if len(evs) == 0 {
		return 0
	}
	first, last := evs[0].RequestReceivedTimestamp, done(evs[0])
	for _, e := range evs {
		if e.RequestReceivedTimestamp.Before(first) {
			first = e.RequestReceivedTimestamp
		}
		if done(e).After(last) {
			last = done(e)
		}
	}
	return last.Sub(first)
}

// done is when a request was answered. A watch's audit event completes
// when the watch closes, often only when the client exits: its answer
// began when it was received.
func done(e localcluster.AuditEvent) time.Time {
	if e.Verb == "watch" {
		return e.RequestReceivedTimestamp
	}
	return e.StageTimestamp
}

// objectKey names an audited object without its subresource.
func objectKey(e localcluster.AuditEvent) string {
	r := e.ObjectRef
	if r == nil || r.Name == "" {
		return ""
	}
	return r.APIGroup + "/" + r.Resource + " " + r.Namespace + "/" + r.Name
}

// rollout is one object a tool changed: from the tool's first write to
// it to the later of the answer to the tool's last write of it and its
// controller's last status update of it.
type rollout struct {
	object     string
	start, end time.Time
	// controlled: a controller (not the tool) wrote its status last, so
	// the end is when the controller was done, which a tool can react to.
	controlled bool
}

// rollouts finds, in one tool's run, every platform object the tool wrote
// (not its own record, backups or lease) and how long it took to
// converge: the workloads, Jobs and CRDs whose progress the tool waited
// for, and the objects whose write alone is the work (a CRD whose status
// does not change still costs the API server its write, which for a big
// schema is tens of milliseconds).
func rollouts(all []localcluster.AuditEvent, tool window) []rollout {
	firstWrite, lastAnswer := map[string]time.Time{}, map[string]time.Time{}
	for _, e := range tool.events(all) {
		k := objectKey(e)
		if !e.IsWrite() || k == "" || e.ObjectRef.Subresource != "" || ownResource(e.ObjectRef.Resource) {
			continue
		}
		if _, ok := firstWrite[k]; !ok {
			firstWrite[k] = e.RequestReceivedTimestamp
		}
		if e.StageTimestamp.After(lastAnswer[k]) {
			lastAnswer[k] = e.StageTimestamp
		}
	}
	lastStatus := map[string]time.Time{}
	for _, e := range all {
		if e.User.Username == tool.user || !e.IsWrite() || e.ObjectRef == nil || e.ObjectRef.Subresource != "status" {
			continue
		}
		if e.RequestReceivedTimestamp.Before(tool.start) || e.RequestReceivedTimestamp.After(tool.end) {
			continue
		}
		k := objectKey(e)
		if w, ok := firstWrite[k]; ok && e.StageTimestamp.After(w) {
			lastStatus[k] = e.StageTimestamp
		}
	}
	var out []rollout
	for k, start := range firstWrite {
		r := rollout{object: k, start: start, end: lastAnswer[k]}
		if st, ok := lastStatus[k]; ok && st.After(r.end) {
			r.end, r.controlled = st, true
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// ownResource tells the resources where a tool keeps its own state, not
// the platform's: Upshift's run records (UpgradeRuns; Secrets before
// them), sources and backups (Secrets) and its lease. A write there is no
// rollout. (The platforms benchmarked here have no Secrets of their own.)
func ownResource(resource string) bool {
	return resource == "secrets" || resource == "leases" || resource == "upgraderuns"
}

// busy is the length of the union of the rollouts' intervals: the time
// during which at least one changed object was still converging. With the
// plan's order of steps it is the critical path of the rollouts
// themselves, the least any tool following that order can take.
func busy(rs []rollout) time.Duration {
	var total time.Duration
	var curStart, curEnd time.Time
	for i, r := range rs {
		if i == 0 || r.start.After(curEnd) {
			total += curEnd.Sub(curStart)
			curStart, curEnd = r.start, r.end
			continue
		}
		if r.end.After(curEnd) {
			curEnd = r.end
		}
	}
	return total + curEnd.Sub(curStart)
}

// reactions are, for each end of a rollout a controller finished, how
// long until the tool's next write (a step starting, or its progress
// saved).
func reactions(all []localcluster.AuditEvent, tool window, rs []rollout) []time.Duration {
	var writes []time.Time
	for _, e := range tool.events(all) {
		if e.IsWrite() {
			writes = append(writes, e.RequestReceivedTimestamp)
		}
	}
	slices.SortFunc(writes, func(a, b time.Time) int { return a.Compare(b) })
	var out []time.Duration
	for _, r := range rs {
		if !r.controlled {
			continue // the tool's own write: nothing to react to
		}
		i, _ := slices.BinarySearchFunc(writes, r.end, func(a, b time.Time) int { return a.Compare(b) })
		if i < len(writes) {
			out = append(out, writes[i].Sub(r.end))
		}
	}
	return out
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1)*p + 0.5)
	return s[i]
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

// gaps are the stretches of a tool's run when no rollout was under way:
// the tool's own overhead. Each is described by the requests made in it.
func gaps(all []localcluster.AuditEvent, tool window, rs []rollout) []string {
	evs := tool.events(all)
	if len(evs) == 0 {
		return nil
	}
	var out []string
	cur := evs[0].RequestReceivedTimestamp
	describe := func(from, to time.Time) {
		if to.Sub(from) < 20*time.Millisecond {
			return
		}
		count := map[string]int{}
		for _, e := range evs {
			if !e.RequestReceivedTimestamp.Before(from) && e.RequestReceivedTimestamp.Before(to) {
				k := e.Verb
				if e.ObjectRef != nil {
					k += " " + e.ObjectRef.Resource
					if e.ObjectRef.Subresource != "" {
						k += "/" + e.ObjectRef.Subresource
					}
				}
				count[k]++
			}
		}
		if to.Sub(from) > 30*time.Millisecond {
			for _, e := range evs {
				if !e.RequestReceivedTimestamp.Before(from) && e.RequestReceivedTimestamp.Before(to) {
					out = append(out, fmt.Sprintf("    +%s %s %s (%s)", e.RequestReceivedTimestamp.Sub(evs[0].RequestReceivedTimestamp).Round(time.Millisecond), e.Verb, e.Object(), e.StageTimestamp.Sub(e.RequestReceivedTimestamp).Round(time.Millisecond)))
				}
			}
		}
		var parts []string
		for k, n := range count {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
		sort.Strings(parts)
		out = append(out, fmt.Sprintf("+%s %s idle: %s", from.Sub(evs[0].RequestReceivedTimestamp).Round(time.Millisecond), to.Sub(from).Round(time.Millisecond), strings.Join(parts, ", ")))
	}
	for _, r := range rs {
		if r.start.After(cur) {
			describe(cur, r.start)
		}
		if r.end.After(cur) {
			cur = r.end
		}
	}
	end := cur
	for _, e := range evs {
		if done(e).After(end) {
			end = done(e)
		}
	}
	describe(cur, end)
	return out
}
