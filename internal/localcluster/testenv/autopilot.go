package testenv

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// AutopilotPlanCRD is k0s's Plan CRD in UpstreamData.
const AutopilotPlanCRD = "k0s/autopilot.k0sproject.io_plans.yaml"

var autopilotPlans = schema.GroupVersionResource{Group: "autopilot.k0sproject.io", Version: "v1beta2", Resource: "plans"}

// AutopilotStandIn is a STAND-IN for k0s autopilot, in test code only:
// autopilot is a k0s controller that swaps the k0s binary on real hosts,
// which the local cluster's fake nodes do not have. It plays autopilot's
// part as k0s documents it: it picks up the Plan named "autopilot",
// moves its status through Schedulable to Completed (or to End), each
// target from SignalPending through SignalSent to SignalCompleted,
// controllers first, one at a time, and "upgrades" a node by making the
// fake kubelet report the version, as a k0s restarted on it would.
type AutopilotStandIn struct {
	// End is how the Plan ends: "" completes it; ApplyFailed fails the
	// apply on FailNode; IncompleteTargets reports FailNode missing.
	End      string
	FailNode string
	// Hold leaves the Plan at Schedulable until it is false.
	Hold bool

	dyn dynamic.Interface
	cs  kubernetes.Interface
	mu  sync.Mutex
	// seen is each Plan picked up, as first read, by UID.
	seen map[types.UID]*unstructured.Unstructured
}

// StartAutopilotStandIn starts the stand-in until the test ends.
func StartAutopilotStandIn(t testing.TB, dyn dynamic.Interface, cs kubernetes.Interface) *AutopilotStandIn {
	a := &AutopilotStandIn{dyn: dyn, cs: cs, seen: map[types.UID]*unstructured.Unstructured{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			a.tick(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return a
}

// Set changes how the stand-in plays, under its lock.
func (a *AutopilotStandIn) Set(f func(*AutopilotStandIn)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}

// Seen are the Plans the stand-in picked up, as first read.
func (a *AutopilotStandIn) Seen() []*unstructured.Unstructured {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*unstructured.Unstructured, 0, len(a.seen))
	for _, p := range a.seen {
		out = append(out, p.DeepCopy())
	}
	return out
}

// tick moves the Plan one move on, as autopilot would.
func (a *AutopilotStandIn) tick(ctx context.Context) {
	plan, err := a.dyn.Resource(autopilotPlans).Get(ctx, "autopilot", metav1.GetOptions{})
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.seen[plan.GetUID()]; !ok {
		a.seen[plan.GetUID()] = plan.DeepCopy()
	}
	state, _, _ := unstructured.NestedString(plan.Object, "status", "state")
	if a.Hold || (state != "" && state != "Schedulable") {
		return
	}
	cmd, kind, version := a.command(plan)
	if cmd == nil {
		return
	}
	st := a.next(ctx, plan, state, cmd, kind, version)
	if st == nil {
		return
	}
	_ = unstructured.SetNestedField(plan.Object, st, "status")
	_, _ = a.dyn.Resource(autopilotPlans).UpdateStatus(ctx, plan, metav1.UpdateOptions{})
}

// command is the Plan's first command, its kind and version.
func (a *AutopilotStandIn) command(plan *unstructured.Unstructured) (map[string]any, string, string) {
	cmds, _, _ := unstructured.NestedSlice(plan.Object, "spec", "commands")
	if len(cmds) == 0 {
		return nil, "", ""
	}
	c, _ := cmds[0].(map[string]any)
	for _, kind := range []string{"k0supdate", "airgapupdate"} {
		if body, ok := c[kind].(map[string]any); ok {
			v, _ := body["version"].(string)
			return body, kind, v
		}
	}
	return nil, "", ""
}

type target struct {
	group, name, state string
}

// next is the Plan's status after one move, nil for none.
func (a *AutopilotStandIn) next(ctx context.Context, plan *unstructured.Unstructured, state string, cmd map[string]any, kind, version string) map[string]any {
	targets := a.targets(cmd, kind)
	if state == "" {
		return status("Schedulable", kind, targets)
	}
	prev := prevStatus(plan, kind, targets)
	if a.End == "IncompleteTargets" {
		for i := range prev {
			if prev[i].name == a.FailNode {
				prev[i].state = "SignalMissingNode"
			}
		}
		return status("IncompleteTargets", kind, prev)
	}
	for i := range prev {
		switch prev[i].state {
		case "SignalPending":
			prev[i].state = "SignalSent"
			return status("Schedulable", kind, prev)
		case "SignalSent":
			if a.End == "ApplyFailed" && prev[i].name == a.FailNode {
				prev[i].state = "SignalApplyFailed"
				return status("ApplyFailed", kind, prev)
			}
			if kind == "k0supdate" && a.upgrade(ctx, prev[i].name, version) != nil {
				return nil // asked again on the next tick
			}
			prev[i].state = "SignalCompleted"
			return status("Schedulable", kind, prev)
		}
	}
	return status("Completed", kind, prev)
}

// targets are the command's nodes, controllers first, all pending.
func (a *AutopilotStandIn) targets(cmd map[string]any, kind string) []target {
	groups := []string{"controllers", "workers"}
	if kind == "airgapupdate" {
		groups = []string{"workers"}
	}
	var out []target
	for _, g := range groups {
		path := []string{"targets", g, "discovery", "static", "nodes"}
		if kind == "airgapupdate" {
			path = []string{g, "discovery", "static", "nodes"}
		}
		nodes, _, _ := unstructured.NestedStringSlice(cmd, path...)
		for _, n := range nodes {
			out = append(out, target{group: g, name: n, state: "SignalPending"})
		}
	}
	return out
}

// prevStatus reads the targets' states from the Plan's status, as the
// stand-in last wrote it.
func prevStatus(plan *unstructured.Unstructured, kind string, targets []target) []target {
	cmds, _, _ := unstructured.NestedSlice(plan.Object, "status", "commands")
	states := map[string]string{}
	for _, c := range cmds {
		cm, _ := c.(map[string]any)
		for _, g := range []string{"controllers", "workers"} {
			list, _, _ := unstructured.NestedSlice(cm, kind, g)
			for _, t := range list {
				tm, _ := t.(map[string]any)
				name, _ := tm["name"].(string)
				st, _ := tm["state"].(string)
				states[name] = st
			}
		}
	}
	for i := range targets {
		if s, ok := states[targets[i].name]; ok {
			targets[i].state = s
		}
	}
	return targets
}

// status is a Plan status as autopilot writes it (the CRD requires
// commands, each with id and state).
func status(state, kind string, targets []target) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	groups := map[string]any{}
	for _, t := range targets {
		list, _ := groups[t.group].([]any)
		groups[t.group] = append(list, map[string]any{"name": t.name, "state": t.state, "lastUpdatedTimestamp": now})
	}
	return map[string]any{"state": state, "commands": []any{map[string]any{"id": int64(0), "state": state, kind: groups}}}
}

// upgrade makes the node's fake kubelet report the version (the part
// of the version up to "+k0s"), as a k0s restarted on it would.
func (a *AutopilotStandIn) upgrade(ctx context.Context, node, version string) error {
	if i := strings.Index(version, "+k0s"); i >= 0 {
		version = version[:i+len("+k0s")]
	}
	return SetKubeletVersion(ctx, a.cs, node, version)
}

// SetKubeletVersion makes the fake kubelet of node report version: its
// status now and, when the version can be a label value (k0s's "+k0s"
// cannot), its label, which kwok reports if the node registers again.
func SetKubeletVersion(ctx context.Context, cs kubernetes.Interface, node, version string) error {
	if len(validation.IsValidLabelValue(version)) == 0 {
		label, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{localcluster.KubeletVersionLabel: version}}})
		if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	st, _ := json.Marshal(map[string]any{"status": map[string]any{"nodeInfo": map[string]string{"kubeletVersion": version}}})
	_, err := cs.CoreV1().Nodes().PatchStatus(ctx, node, st)
	return err
}
