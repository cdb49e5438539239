package nodesready

import (
	"github.com/upshift-dev/upshift/internal/watchloop"

	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// shownNodes bounds how many NotReady nodes a message names.
const shownNodes = 5

// judge decides on the nodes seen so far.
type judge struct {
	selector string // as written; empty means every node
	minReady int    // 0: every matching node must be Ready
}

// look judges the nodes; first is true for the first complete list.
func (j judge) look(nodes []*corev1.Node, first bool) watchloop.Verdict {
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Name < nodes[b].Name })
	if len(nodes) == 0 {
		if first {
			return watchloop.Failed("%s", j.nothing())
		}
		return watchloop.Waiting("%s any more", j.nothing())
	}
	var notReady []string
	for _, n := range nodes {
		if reason, ok := ready(n); !ok {
			notReady = append(notReady, n.Name+reason)
		}
	}
	readyCount := len(nodes) - len(notReady)
	required, need := len(nodes), ""
	if j.minReady > 0 {
		required, need = j.minReady, fmt.Sprintf(", at least %d required", j.minReady)
	}
	state := fmt.Sprintf("%d of %d %s Ready%s", readyCount, len(nodes), j.what(len(nodes)), need)
	if len(notReady) > 0 {
		state += "; NotReady: " + list(notReady)
	}
	if readyCount >= required {
		return watchloop.Passed("%s", state)
	}
	return watchloop.Waiting("%s", state)
}

// ready reports whether the node's Ready condition is True and, if not,
// why: " (KubeletNotReady: kubelet stopped posting…)".
func ready(n *corev1.Node) (string, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return "", true
		}
		detail := []string{"Ready=" + string(c.Status)}
		if c.Reason != "" {
			detail = append(detail, c.Reason)
		}
		if c.Message != "" {
			detail = append(detail, c.Message)
		}
		return " (" + strings.Join(detail, ": ") + ")", false
	}
	return " (no Ready condition yet)", false
}

// what names the nodes in messages: "nodes", or "nodes matching "pool=a"".
func (j judge) what(n int) string {
	noun := "nodes"
	if n == 1 {
		noun = "node"
	}
	if j.selector == "" {
		return noun
	}
	return fmt.Sprintf("%s matching %q", noun, j.selector)
}

// nothing says that no node matches.
func (j judge) nothing() string {
	if j.selector == "" {
		return "no nodes in the cluster"
	}
	return fmt.Sprintf("no nodes match %q", j.selector)
}

// list names up to shownNodes entries and counts the rest.
func list(items []string) string {
	if len(items) <= shownNodes {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:shownNodes], "; "), len(items)-shownNodes)
}
