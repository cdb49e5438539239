package runstore

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// statusPatch sends only what changed, down to a stage's field, and
// applied to the stored object (as the API server applies it) gives the
// new status exactly; unknown what is stored, it sends the whole status.
func TestStatusPatch(t *testing.T) {
	stage := func(name string, phase v1alpha1.Phase) v1alpha1.StageStatus {
		return v1alpha1.StageStatus{Name: name, Phase: phase, Message: strings.Repeat("a long message. ", 10)}
	}
	base := v1alpha1.RunStatus{Phase: v1alpha1.RunRunning, Attempt: 1, Transitions: 3, Message: "m",
		Stages: []v1alpha1.StageStatus{stage("a", v1alpha1.PhaseSucceeded), stage("b", v1alpha1.PhaseRunning), stage("c", v1alpha1.PhasePending)}}
	for _, tc := range []struct {
		name   string
		edit   func(*v1alpha1.RunStatus)
		sends  []string // parts every patch must hold
		avoids []string // parts it must not
	}{
		{name: "one stage and a counter", edit: func(s *v1alpha1.RunStatus) {
			s.Transitions++
			s.Stages[1].Phase = v1alpha1.PhaseSucceeded
		}, sends: []string{`"/status/transitions"`, `"/status/stages/1/phase"`}, avoids: []string{`"/status/stages/0`, `"/status/stages/2`, `"/status/attempt"`, "a long message"}},
		{name: "a field removed", edit: func(s *v1alpha1.RunStatus) { s.Message = "" },
			sends: []string{`{"op":"remove","path":"/status/message"}`}, avoids: []string{"/status/stages"}},
		{name: "stages added", edit: func(s *v1alpha1.RunStatus) { s.Stages = append(s.Stages, stage("d", v1alpha1.PhasePending)) },
			sends: []string{`"/status/stages/-"`}, avoids: []string{`"/status/stages/0`}},
		{name: "stages removed from the end", edit: func(s *v1alpha1.RunStatus) { s.Stages = s.Stages[:1] },
			sends: []string{`"remove","path":"/status/stages/2"`, `"remove","path":"/status/stages/1"`}},
		{name: "all stages gone", edit: func(s *v1alpha1.RunStatus) { s.Stages = nil },
			sends: []string{`{"op":"remove","path":"/status/stages"}`}},
		{name: "a stage all changed: replaced whole, which is shorter", edit: func(s *v1alpha1.RunStatus) {
			s.Stages[1] = v1alpha1.StageStatus{Name: "x", Phase: v1alpha1.PhaseFailed}
		}, sends: []string{`{"op":"replace","path":"/status/stages/1","value":{"name":"x","phase":"Failed"}}`}, avoids: []string{`"/status/stages/1/`}},
		{name: "nothing changed", edit: func(*v1alpha1.RunStatus) {}, avoids: []string{"/status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := base
			old.Stages = append([]v1alpha1.StageStatus(nil), base.Stages...)
			next := old
			next.Stages = append([]v1alpha1.StageStatus(nil), old.Stages...)
			tc.edit(&next)
			last, err := splitStatus(&old)
			if err != nil {
				t.Fatal(err)
			}
			want, err := splitStatus(&next)
			if err != nil {
				t.Fatal(err)
			}
			patch, err := statusPatch("42", &last, want)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(patch), `[{"op":"replace","path":"/metadata/resourceVersion","value":"42"}`) {
				t.Errorf("the patch does not start by setting the resourceVersion it was read at: %s", patch)
			}
			for _, s := range tc.sends {
				if !strings.Contains(string(patch), s) {
					t.Errorf("the patch lacks %s: %s", s, patch)
				}
			}
			for _, s := range tc.avoids {
				if strings.Contains(string(patch), s) {
					t.Errorf("the patch sends %s, which did not change: %s", s, patch)
				}
			}
			if got := apply(t, old, patch); !got.equal(want) {
				t.Errorf("applied, the patch gives %s, want %s", got.raw, want.raw)
			}
			// Unknown what is stored: the whole status, which applies to
			// an object without status too.
			whole, err := statusPatch("42", nil, want)
			if err != nil {
				t.Fatal(err)
			}
			if got := apply(t, v1alpha1.RunStatus{}, whole); !got.equal(want) {
				t.Errorf("the whole status applied gives %s, want %s", got.raw, want.raw)
			}
		})
	}
}

// apply applies patch to an UpgradeRun holding st (none when st is
// empty), as the API server would, and returns the status it gives.
func apply(t *testing.T, st v1alpha1.RunStatus, patch []byte) storedStatus {
	t.Helper()
	obj := map[string]any{"metadata": map[string]any{"name": "r", "resourceVersion": "41"}}
	if st.Phase != "" {
		obj["status"] = st
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("the patch does not apply: %v\n%s", err, patch)
	}
	var back struct {
		Metadata struct{ ResourceVersion string }
		Status   v1alpha1.RunStatus
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Metadata.ResourceVersion != "42" {
		t.Errorf("resourceVersion after the patch %q, want the precondition 42", back.Metadata.ResourceVersion)
	}
	got, err := splitStatus(&back.Status)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
