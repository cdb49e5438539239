package steps

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/crds"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
	"github.com/upshift-dev/upshift/internal/steps/image"
	"github.com/upshift-dev/upshift/internal/steps/manifests"
	"github.com/upshift-dev/upshift/internal/steps/recreate"
	"github.com/upshift-dev/upshift/internal/steps/wait"
)

func TestNew(t *testing.T) {
	d, err := clients.New(&rest.Config{Host: "https://127.0.0.1:1"}) // builds clients, contacts nothing
	if err != nil {
		t.Fatal(err)
	}
	cm, err := source.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: demo}\n"))
	if err != nil {
		t.Fatal(err)
	}
	frozen := &v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}}}}
	img := &v1alpha1.ImageStep{Kind: "Deployment", Namespace: "demo", Name: "web", Images: map[string]string{"web": "web:v2"}}
	tests := []struct {
		name    string
		s       v1alpha1.Step
		wantErr error
		check   func(any) bool
	}{
		{name: "no kind", s: v1alpha1.Step{Name: "empty"}, wantErr: ErrInvalidStep},
		{name: "two kinds", s: v1alpha1.Step{Name: "both", Manifests: &v1alpha1.ManifestsStep{}, Image: img}, wantErr: ErrInvalidStep},
		{name: "crds", s: v1alpha1.Step{Name: "c", CRDs: &v1alpha1.CRDsStep{}}, check: func(e any) bool { _, ok := e.(*crds.Executor); return ok }},
		{name: "crds with a ConfigMap", s: v1alpha1.Step{Name: "c", CRDs: &v1alpha1.CRDsStep{}}, wantErr: crds.ErrNotCRD},
		{name: "manifests", s: v1alpha1.Step{Name: "m", Manifests: &v1alpha1.ManifestsStep{}}, check: func(e any) bool { _, ok := e.(*manifests.Executor); return ok }},
		{name: "image", s: v1alpha1.Step{Name: "i", Image: img}, check: func(e any) bool { _, ok := e.(*image.Executor); return ok }},
		{name: "bad image", s: v1alpha1.Step{Name: "i", Image: &v1alpha1.ImageStep{Kind: "Job"}}, wantErr: image.ErrInvalidSpec},
		{name: "recreate", s: v1alpha1.Step{Name: "r", Recreate: &v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: "t-*"}}, check: func(e any) bool { _, ok := e.(*recreate.Executor); return ok }},
		{name: "pause", s: v1alpha1.Step{Name: "p", Pause: &v1alpha1.PauseStep{Duration: metav1.Duration{Duration: time.Second}}}, check: func(e any) bool { _, ok := e.(*wait.Step); return ok }},
		{name: "freeze", s: v1alpha1.Step{Name: "f", Freeze: frozen}, check: func(e any) bool { _, ok := e.(*freeze.Executor); return ok }},
		{name: "freeze without rules", s: v1alpha1.Step{Name: "f", Freeze: &v1alpha1.FreezeStep{}}, wantErr: freeze.ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := cm
			if tt.name == "crds" {
				objs = nil
			}
			e, err := New(Input{Spec: tt.s, Objects: objs, Run: "shop-2", Runs: step.Runs{Namespace: "upshift-system"}}, d)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), "step \""+tt.s.Name+"\"") {
					t.Fatalf("New = %v, want %v naming the step", err, tt.wantErr)
				}
				if e != nil {
					t.Errorf("New returned an executor with an error")
				}
				return
			}
			if err != nil || !tt.check(e) {
				t.Fatalf("New = %T, %v", e, err)
			}
		})
	}
}

// Only a freeze has a Finisher; the other kinds are not even built (a
// helm step without its chart would fail to).
func TestNewFinisher(t *testing.T) {
	d, err := clients.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	runs := step.Runs{Namespace: "upshift-system"}
	frozen := &v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}}}}
	f, err := NewFinisher(Input{Spec: v1alpha1.Step{Name: "f", Freeze: frozen}, Run: "shop-2", Runs: runs}, d)
	if _, ok := f.(*freeze.Executor); !ok || err != nil {
		t.Fatalf("freeze: NewFinisher = %T, %v", f, err)
	}
	f, err = NewFinisher(Input{Spec: v1alpha1.Step{Name: "h", Helm: &v1alpha1.HelmStep{Release: "r"}}, Run: "shop-2", Runs: runs}, d)
	if f != nil || err != nil {
		t.Fatalf("helm: NewFinisher = %v, %v; want nothing to finish", f, err)
	}
}

// Each kind's traits, as the runner relies on them: which steps' gates
// may fence on write answers, which stages may have the next backed up
// while they run, and which may be backed up ahead of their turn.
func TestTraitsOfEachKind(t *testing.T) {
	for _, tt := range []struct {
		s    v1alpha1.Step
		want step.Traits
	}{
		{v1alpha1.Step{Image: &v1alpha1.ImageStep{}}, step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}},
		{v1alpha1.Step{CRDs: &v1alpha1.CRDsStep{}}, step.Traits{ApplierOnly: true, Confined: true, NamesUpFront: true}},
		{v1alpha1.Step{Manifests: &v1alpha1.ManifestsStep{}}, step.Traits{ApplierOnly: true, NamesUpFront: true}},
		{v1alpha1.Step{Approval: &v1alpha1.ApprovalStep{}}, step.Traits{NamesUpFront: true}},
		{v1alpha1.Step{Pause: &v1alpha1.PauseStep{}}, step.Traits{NamesUpFront: true}},
		{v1alpha1.Step{Helm: &v1alpha1.HelmStep{}}, step.Traits{}},
		{v1alpha1.Step{Job: &v1alpha1.JobStep{}}, step.Traits{}},
		{v1alpha1.Step{Recreate: &v1alpha1.RecreateStep{}}, step.Traits{}},
		{v1alpha1.Step{Freeze: &v1alpha1.FreezeStep{}}, step.Traits{}},
		{v1alpha1.Step{}, step.Traits{}},
	} {
		if got := TraitsOf(tt.s); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.s.Kind(), got, tt.want)
		}
	}
}
