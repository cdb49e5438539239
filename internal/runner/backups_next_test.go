package runner

import (
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNextBackupFits(t *testing.T) {
	image := v1alpha1.Step{Name: "i", Image: &v1alpha1.ImageStep{Kind: "Deployment", Namespace: "a", Name: "b"}}
	manifests := v1alpha1.Step{Name: "m", Manifests: &v1alpha1.ManifestsStep{}}
	crds := v1alpha1.Step{Name: "c", CRDs: &v1alpha1.CRDsStep{}}
	helm := v1alpha1.Step{Name: "h", Helm: &v1alpha1.HelmStep{}}
	job := v1alpha1.Step{Name: "j", Job: &v1alpha1.JobStep{}}
	recreate := v1alpha1.Step{Name: "r", Recreate: &v1alpha1.RecreateStep{}}
	approval := v1alpha1.Step{Name: "a", Approval: &v1alpha1.ApprovalStep{}}
	stages := func(steps ...[]v1alpha1.Step) []v1alpha1.Stage {
		var out []v1alpha1.Stage
		for _, s := range steps {
			out = append(out, v1alpha1.Stage{Steps: s})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		stages []v1alpha1.Stage
		want   bool
	}{
		{"image then image", stages([]v1alpha1.Step{image}, []v1alpha1.Step{image}), true},
		{"image then manifests and an approval", stages([]v1alpha1.Step{image, image}, []v1alpha1.Step{manifests, approval}), true},
		{"CRDs then an image", stages([]v1alpha1.Step{crds}, []v1alpha1.Step{image}), true},
		{"the last stage", stages([]v1alpha1.Step{image}), false},
		{"manifests: they may change anything", stages([]v1alpha1.Step{manifests}, []v1alpha1.Step{image}), false},
		{"a job beside the image: it may change anything", stages([]v1alpha1.Step{image, job}, []v1alpha1.Step{image}), false},
		{"then a Helm release: its revision is read with the backup", stages([]v1alpha1.Step{image}, []v1alpha1.Step{helm}), false},
		{"then a re-creation: its objects are found by pattern", stages([]v1alpha1.Step{image}, []v1alpha1.Step{recreate}), false},
		{"a stage without steps", stages(nil, []v1alpha1.Step{image}), false},
	} {
		if got := nextBackupFits(c.stages, 0); got != c.want {
			t.Errorf("%s: nextBackupFits = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDisjoint(t *testing.T) {
	web := step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	webV1beta1 := step.Ref{APIVersion: "apps/v1beta1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	api := step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "api"}
	cm := step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}
	rs := step.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-1"}
	gw := step.Ref{APIVersion: "networking.liqo.io/v1beta1", Kind: "WgGatewayServerTemplate", Namespace: "liqo", Name: "wireguard-server"}
	liqoCRDs := step.Reach{Groups: []string{"networking.liqo.io"}}
	rollout := step.Reach{Kinds: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}
	for _, c := range []struct {
		name        string
		these, next []step.Ref
		reach       step.Reach
		want        bool
	}{
		{"other objects", []step.Ref{web}, []step.Ref{api, cm}, rollout, true},
		{"the same workload", []step.Ref{web}, []step.Ref{api, web}, rollout, false},
		{"the same workload at another version", []step.Ref{web}, []step.Ref{webV1beta1}, rollout, false},
		{"a ReplicaSet, which a rollout writes", []step.Ref{web}, []step.Ref{rs}, rollout, false},
		{"a ReplicaSet, beside a step that reaches no further than its targets", []step.Ref{web}, []step.Ref{rs}, step.Reach{}, true},
		{"an object of another group than the CRDs'", nil, []step.Ref{web, gw}, step.Reach{Groups: []string{"ipam.liqo.io"}}, true},
		{"an object of a group whose CRDs change", nil, []step.Ref{web, gw}, liqoCRDs, false},
	} {
		if got := disjoint(c.these, c.next, c.reach); got != c.want {
			t.Errorf("%s: disjoint = %v, want %v", c.name, got, c.want)
		}
	}
}
