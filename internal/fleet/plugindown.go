package fleet

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// ReasonPluginDown is the event and condition reason of a plugin that
// does not answer.
const ReasonPluginDown = "PluginDown"

// PluginDown records that the plugin does not answer: the rollout stays
// where it is, and the condition names the clusters it leaves out of
// service meanwhile, so no cluster is out without an operator seeing why.
// It returns the event to emit when the plugin was reachable before.
func PluginDown(st *v1alpha1.ClusterVersionStatus, err error, now time.Time) []Event {
	var out []string
	for _, e := range st.Clusters {
		if e.Phase != v1alpha1.ClusterPending && !e.InService {
			what := string(e.Phase)
			if e.Operation != nil {
				what = string(e.Operation.Action) + " in flight"
			}
			out = append(out, fmt.Sprintf("%s (%s)", e.ID, what))
		}
	}
	msg := fmt.Sprintf("%v; nothing moves until it does", err)
	if len(out) > 0 {
		msg += "; out of service meanwhile: " + strings.Join(out, ", ")
	}
	// Read before the set, which changes the condition in place.
	wasDown := meta.IsStatusConditionFalse(st.Conditions, ConditionPluginReachable)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPluginReachable, Status: metav1.ConditionFalse,
		Reason: ReasonPluginDown, Message: msg, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)})
	if wasDown {
		return nil
	}
	return []Event{{Warning: true, Reason: ReasonPluginDown, Message: msg}}
}
