package server

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// hostChecks are the host preflights Upshift runs before an
// infrastructure upgrade, from what the nodes report to the API server
// (embedded-cluster runs its own on each host; Upshift reads what the
// kubelets say of theirs): every node Ready, none under disk, memory or
// PID pressure (strict failures), none cordoned (a warning: an upgrade
// drains and cordons nodes itself, and a node cordoned before may be
// someone's maintenance).
func hostChecks(nodes []corev1.Node) PreflightOutput {
	out := PreflightOutput{Pass: []PreflightResult{}, Warn: []PreflightResult{}, Fail: []PreflightResult{}}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	var notReady, pressure, cordoned []string
	for i := range nodes {
		n := &nodes[i]
		if !nodeCondition(n, corev1.NodeReady) {
			notReady = append(notReady, n.Name)
		}
		for _, c := range []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodeMemoryPressure, corev1.NodePIDPressure} {
			if nodeCondition(n, c) {
				pressure = append(pressure, fmt.Sprintf("%s (%s)", n.Name, c))
			}
		}
		if n.Spec.Unschedulable {
			cordoned = append(cordoned, n.Name)
		}
	}
	add := func(title string, bad []string, strict bool, good, badMsg string) {
		switch {
		case len(bad) == 0:
			out.Pass = append(out.Pass, PreflightResult{Title: title, Message: good, Strict: strict})
		case strict:
			out.Fail = append(out.Fail, PreflightResult{Title: title, Message: badMsg + strings.Join(bad, ", "), Strict: true})
		default:
			out.Warn = append(out.Warn, PreflightResult{Title: title, Message: badMsg + strings.Join(bad, ", ")})
		}
	}
	if len(nodes) == 0 {
		out.Fail = append(out.Fail, PreflightResult{Title: "Nodes", Message: "the cluster reports no node", Strict: true})
		return out
	}
	add("Nodes Ready", notReady, true, fmt.Sprintf("all %d nodes are Ready", len(nodes)), "not Ready: ")
	add("Node pressure", pressure, true, "no node reports disk, memory or PID pressure", "under pressure: ")
	add("Nodes schedulable", cordoned, false, "no node is cordoned", "cordoned before the upgrade: ")
	return out
}

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
