package fleet

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clip"
	"github.com/upshift-dev/upshift/internal/plugin"
)

// ReasonPluginAnswered is the event of a cluster the plugin answered an
// error about, and the PluginReachable condition's reason (True: the
// plugin answers) while some are.
const ReasonPluginAnswered = "PluginAnsweredError"

// answeredPrefix starts the message of a cluster the plugin answered an
// error about; a read of the cluster that succeeds clears it.
const answeredPrefix = "the ops plugin answered "

// maxListed bounds the clusters a condition's message names.
const maxListed = 5

// answer sorts a read's error: an answer about the cluster is recorded
// on it (nil: the step goes on with the other clusters); silence, or an
// answer no cluster can avoid, stops the step as ErrPluginDown.
func (r *reader) answer(id, call string, err error) error {
	if plugin.Classify(err) != plugin.ClusterAnswer {
		return down(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.o.Answers[id]; !ok {
		r.o.Answers[id] = fmt.Sprintf("%s with %s", call, plugin.Answer(err))
	}
	return nil
}

// observeAnswers marks the clusters the plugin answered an error about
// (not available: it could not say they are), and clears the mark of
// those read since.
func (x *decider) observeAnswers(e *v1alpha1.FleetClusterStatus) {
	a, answered := x.o.Answers[e.ID]
	_, v := x.o.Versions[e.ID]
	_, s := x.o.Statuses[e.ID]
	switch {
	case answered:
		msg := clip.Bytes(answeredPrefix+a, MaxClusterMessage)
		if e.Message != msg {
			x.event(true, ReasonPluginAnswered, "cluster %s: %s", e.ID, msg)
		}
		e.Message = msg
		if !s {
			e.Available = false
		}
	case (v || s) && strings.HasPrefix(e.Message, answeredPrefix):
		e.Message = ""
	}
}

// pluginUp records that the plugin answered, naming the clusters it
// answered errors about.
func pluginUp(st *v1alpha1.ClusterVersionStatus, answers map[string]string, now time.Time) {
	c := metav1.Condition{Type: ConditionPluginReachable, Status: metav1.ConditionTrue, Reason: "Answering", Message: "the ops plugin answers",
		ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)}
	if len(answers) > 0 {
		ids := make([]string, 0, len(answers))
		for id := range answers {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var parts []string
		for _, id := range ids[:min(len(ids), maxListed)] {
			parts = append(parts, fmt.Sprintf("%s: %s", id, answers[id]))
		}
		if len(ids) > maxListed {
			parts = append(parts, fmt.Sprintf("and %d more (see each cluster's message)", len(ids)-maxListed))
		}
		c.Reason = ReasonPluginAnswered
		c.Message = fmt.Sprintf("the ops plugin answers, with errors about %s (those clusters wait; the others go on): %s",
			clusters(len(ids)), strings.Join(parts, "; "))
	}
	meta.SetStatusCondition(&st.Conditions, c)
}
