package pvcsbound

import (
	"github.com/upshift-dev/upshift/internal/watchloop"

	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// shownClaims bounds how many claims a message names.
const shownClaims = 5

// judge decides on the claims seen so far.
type judge struct {
	namespace string
	selector  string // as written; empty means every claim
}

// look judges the claims; first is true for the first complete list.
func (j judge) look(claims []*corev1.PersistentVolumeClaim, first bool) watchloop.Verdict {
	sort.Slice(claims, func(a, b int) bool { return claims[a].Name < claims[b].Name })
	if len(claims) == 0 {
		if first {
			return watchloop.Failed("%s", j.nothing())
		}
		return watchloop.Waiting("%s any more", j.nothing())
	}
	var pending, lost []string
	for _, c := range claims {
		switch c.Status.Phase {
		case corev1.ClaimBound:
		case corev1.ClaimLost:
			lost = append(lost, fmt.Sprintf("PVC %s/%s is Lost: its PersistentVolume %q is gone", c.Namespace, c.Name, c.Spec.VolumeName))
		default: // Pending, or no status yet
			pending = append(pending, c.Name)
		}
	}
	switch {
	case len(lost) == 1:
		return watchloop.Failed("%s", lost[0])
	case len(lost) > 1:
		return watchloop.Failed("%s (and %d more Lost)", lost[0], len(lost)-1)
	case len(pending) > 0:
		return watchloop.Waiting("%d of %s in %s still Pending: %s", len(pending), plural(len(claims)), j.namespace, names(pending))
	}
	return watchloop.Passed("%s Bound", plural(len(claims)))
}

// nothing says that no claim matches.
func (j judge) nothing() string {
	if j.selector == "" {
		return "no PVCs in " + j.namespace
	}
	return fmt.Sprintf("no PVCs match %q in %s", j.selector, j.namespace)
}

// plural says "1 PVC" or "3 PVCs".
func plural(n int) string {
	if n == 1 {
		return "1 PVC"
	}
	return fmt.Sprintf("%d PVCs", n)
}

// names lists up to shownClaims names and counts the rest.
func names(items []string) string {
	if len(items) <= shownClaims {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:shownClaims], ", "), len(items)-shownClaims)
}
