package recreate

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/watchloop"
)

// waitBack watches the step's objects in one namespace until no old one
// is left and at least expected new ones are Current. A new one that fails
// (a crash loop) fails the wait at once.
func (e *Executor) waitBack(ctx context.Context, ns string, old map[types.UID]bool, expected int, timeout time.Duration) (step.Result, error) {
	ri, err := e.resource(ns)
	if err != nil {
		return step.Result{}, err
	}
	l := watchloop.Selecting(e.what()+" in "+ns, e.spec.Selector, ri.List, ri.Watch)
	return watchloop.Until(ctx, timeout, l, &unstructured.Unstructured{}, func(objs []*unstructured.Unstructured, _ bool) watchloop.Verdict {
		return judgeBack(ns, e.what(), objs, old, expected)
	})
}

// judgeBack is one look at a namespace's objects.
func judgeBack(ns, what string, objs []*unstructured.Unstructured, oldUIDs map[types.UID]bool, expected int) watchloop.Verdict {
	old, current := 0, 0
	pending := ""
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		if oldUIDs[o.GetUID()] {
			old++
			continue
		}
		h := kube.Evaluate(o, kube.Related{})
		switch {
		case h.Failing():
			return watchloop.Failed("%s", h.Message)
		case h.Current():
			current++
		default:
			pending = h.Message
		}
	}
	if old == 0 && current >= expected {
		return watchloop.Passed("%s: %d back and Current", ns, current)
	}
	msg := fmt.Sprintf("%s: %d of %d %s back and Current", ns, current, expected, what)
	if old > 0 {
		msg += fmt.Sprintf(", %d old one(s) still there", old)
	}
	if pending != "" {
		msg += "; " + pending
	}
	return watchloop.Waiting("%s", msg)
}
