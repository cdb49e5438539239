package autopilot

import (
	"crypto/sha1"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

const (
	// PlanName is autopilot's Plan's name: embedded-cluster's, and one
	// at a time.
	PlanName = "autopilot"
	// InstallationAnnotation names the Installation the upgrade records
	// (embedded-cluster's annotation).
	InstallationAnnotation = "embedded-cluster.replicated.com/installation-name"
	// StepAnnotation names the run, attempt and step that wrote a Plan.
	StepAnnotation = "upshift.dev/step"
	// ControlPlaneLabel marks the nodes that are autopilot's controllers.
	ControlPlaneLabel = "node-role.kubernetes.io/control-plane"
)

// GVR and GVK of autopilot's Plan.
var (
	GVR = schema.GroupVersionResource{Group: "autopilot.k0sproject.io", Version: "v1beta2", Resource: "plans"}
	GVK = schema.GroupVersionKind{Group: "autopilot.k0sproject.io", Version: "v1beta2", Kind: "Plan"}
)

// Ref is the Plan as the stage's backup names it.
var Ref = step.Ref{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind, Name: PlanName}

// The Plan states (k0s's pkg/autopilot/controller/plans/core).
const (
	Schedulable       = "Schedulable"
	SchedulableWait   = "SchedulableWait"
	Completed         = "Completed"
	Warning           = "Warning"
	IncompleteTargets = "IncompleteTargets"
	Restricted        = "Restricted"
	ApplyFailed       = "ApplyFailed"
)

// Reason is embedded-cluster's message for a Plan state (its operator's
// ReasonForState, typo included: users search for what they read).
func Reason(state string) string {
	switch state {
	case "":
		return "Upgrade not yet scheduled"
	case Schedulable:
		return "Upgrade in being prepared"
	case SchedulableWait:
		return "Upgrade is being prepared"
	case Completed:
		return "Upgrade has been completed"
	case Warning:
		return "Upgrade has failed with warnings"
	case IncompleteTargets, Restricted:
		return "Upgrade has failed (malformed request)"
	case ApplyFailed:
		return "Upgrade apply has failed"
	}
	return "Upgrade is in an unknown state " + state
}

// Ended says autopilot is done with a Plan in state; Failed, that it
// ended other than Completed (embedded-cluster's HasPlanFailed).
func Ended(state string) bool {
	return state != "" && state != Schedulable && state != SchedulableWait
}

func Failed(state string) bool { return Ended(state) && state != Completed }

// owner is what a Plan's StepAnnotation says for the step of attempt.
func owner(attempt step.RunAttempt, stepName string) string {
	return fmt.Sprintf("%s/%d/%s", attempt.Run, attempt.Attempt, stepName)
}

// planID is the Plan's spec.id: a UUID, as embedded-cluster writes, but
// derived from the writer (owner) so the same step writes the same Plan.
func planID(owner string) string {
	return uuid.NewHash(sha1.New(), uuid.NameSpaceURL, []byte("upshift.dev/autopilot/"+owner), 5).String()
}

// roles splits nodes into autopilot's controllers and workers.
type roles struct {
	controllers, workers []string
}

func (r roles) all() []string {
	return append(append([]string{}, r.controllers...), r.workers...)
}

// build is the Plan the step writes.
func build(spec v1alpha1.AutopilotStep, owner string, r roles, now time.Time) *unstructured.Unstructured {
	platforms := map[string]any{}
	for name, a := range spec.Platforms {
		p := map[string]any{"url": a.URL}
		if a.SHA256 != "" {
			p["sha256"] = a.SHA256
		}
		platforms[name] = p
	}
	var command map[string]any
	if spec.Airgap {
		command = map[string]any{"airgapupdate": map[string]any{
			"version": spec.Version, "platforms": platforms, "workers": static(r.all()),
		}}
	} else {
		command = map[string]any{"k0supdate": map[string]any{
			"version": spec.Version, "platforms": platforms,
			"targets": map[string]any{"controllers": static(r.controllers), "workers": static(r.workers)},
		}}
	}
	annotations := map[string]any{StepAnnotation: owner}
	if spec.Installation != "" {
		annotations[InstallationAnnotation] = spec.Installation
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GVK.GroupVersion().String(), "kind": GVK.Kind,
		"metadata": map[string]any{"name": PlanName, "annotations": annotations},
		"spec": map[string]any{
			"id": planID(owner), "timestamp": now.UTC().Format(time.RFC3339),
			"commands": []any{command},
		},
	}}
}

func static(nodes []string) map[string]any {
	list := make([]any, len(nodes))
	for i, n := range nodes {
		list[i] = n
	}
	return map[string]any{"discovery": map[string]any{"static": map[string]any{"nodes": list}}}
}

// progress reads a Plan's state and its targets' states, as autopilot
// reports them in status.commands[].{k0supdate,airgapupdate}.
func progress(plan *unstructured.Unstructured) (state string, targets map[string]string) {
	state, _, _ = unstructured.NestedString(plan.Object, "status", "state")
	targets = map[string]string{}
	cmds, _, _ := unstructured.NestedSlice(plan.Object, "status", "commands")
	for _, c := range cmds {
		cm, _ := c.(map[string]any)
		for _, path := range [][]string{{"k0supdate", "controllers"}, {"k0supdate", "workers"}, {"airgapupdate", "workers"}} {
			list, _, _ := unstructured.NestedSlice(cm, path...)
			for _, t := range list {
				tm, _ := t.(map[string]any)
				name, _ := tm["name"].(string)
				st, _ := tm["state"].(string)
				if name != "" {
					targets[name] = st
				}
			}
		}
	}
	return state, targets
}

// describe says a Plan's state in embedded-cluster's words, with its
// targets by state: "Upgrade in being prepared (SignalCompleted: node-0;
// SignalSent: node-1)".
func describe(state string, targets map[string]string) string {
	if len(targets) == 0 {
		return Reason(state)
	}
	by := map[string][]string{}
	for name, st := range targets {
		by[st] = append(by[st], name)
	}
	states := make([]string, 0, len(by))
	for st := range by {
		states = append(states, st)
	}
	sort.Strings(states)
	parts := make([]string, len(states))
	for i, st := range states {
		sort.Strings(by[st])
		parts[i] = fmt.Sprintf("%s: %s", orUnknown(st), strings.Join(by[st], ", "))
	}
	return fmt.Sprintf("%s (%s)", Reason(state), strings.Join(parts, "; "))
}

func orUnknown(s string) string {
	if s == "" {
		return "no state yet"
	}
	return s
}
