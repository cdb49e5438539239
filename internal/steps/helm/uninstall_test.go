package helm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	helmchart "helm.sh/helm/v3/pkg/chart"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/helm"
)

// A helmUninstall step previews and deletes the release's objects,
// keeps its history, and succeeds again on a release it uninstalled (a
// resumed run); the stage's rollback brings the release back on the
// revision its backup kept, with its objects.
func TestUninstallKeepsHistoryForTheRollback(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if res := f.run(t, "1.0.0", "1.0", time.Minute); res.Status != step.Succeeded {
		t.Fatalf("install: %+v", res)
	}
	rel := helm.NewRelease("addon", f.NS, time.Minute, f.clients)
	kept, err := rel.Keep(ctx)
	if err != nil || kept.Revision != 1 {
		t.Fatalf("Keep = %+v, %v", kept, err)
	}
	u, err := helm.NewUninstall(v1alpha1.HelmUninstallStep{Release: "addon", Namespace: f.NS}, time.Minute, f.clients)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := u.Targets(ctx)
	if err != nil || len(targets) == 0 {
		t.Fatalf("Targets = %v, %v; want the release's objects", targets, err)
	}
	changes, err := u.Preview(ctx)
	if err != nil || len(changes) != len(targets) || changes[0].Action != step.Delete {
		t.Fatalf("Preview = %+v, %v; want every object deleted", changes, err)
	}

	res, err := u.Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	mustContain(t, "Run", res.Message, "uninstalled release "+f.NS+"/addon (revision 1")
	if _, err := f.Clientset.AppsV1().Deployments(f.NS).Get(ctx, "addon", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the release's Deployment after the uninstall: %v, want gone", err)
	}
	again, err := u.Run(ctx)
	if err != nil || again.Status != step.Succeeded {
		t.Fatalf("Run again = %+v, %v", again, err)
	}
	mustContain(t, "Run again", again.Message, "is not installed")

	done, err := rel.Revert(ctx, &v1alpha1.BackupRef{HelmReleases: []v1alpha1.HelmRevision{kept}})
	if err != nil || done.Status != step.Succeeded {
		t.Fatalf("Revert = %+v, %v", done, err)
	}
	mustContain(t, "Revert", done.Message, "rolled back to revision 1")
	if got := f.image(t); got != "example.com/addon:1.0" {
		t.Errorf("image after the rollback = %s, want example.com/addon:1.0", got)
	}
}

// A release whose chart templates a CRD is refused before anything is
// uninstalled: the uninstall would delete every object of its kind.
func TestUninstallRefusesATemplatedCRD(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ch := chart(t, "1.0.0")
	ch.Templates = append(ch.Templates, &helmchart.File{Name: "templates/crd.yaml", Data: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.` + f.NS + `.example.com}
spec:
  group: ` + f.NS + `.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)})
	ex, err := helm.New(v1alpha1.HelmStep{Release: "addon", Namespace: f.NS}, ch, map[string]any{"tag": "1.0"}, time.Minute, f.clients)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ex.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("install: %+v, %v", res, err)
	}
	u, err := helm.NewUninstall(v1alpha1.HelmUninstallStep{Release: "addon", Namespace: f.NS}, time.Minute, f.clients)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Targets(ctx); err == nil || !strings.Contains(err.Error(), "templates CRD widgets."+f.NS+".example.com") {
		t.Fatalf("Targets = %v, want the CRD named", err)
	}
	if res, err := u.Run(ctx); err == nil && res.Status == step.Succeeded {
		t.Fatalf("Run uninstalled a release templating a CRD: %+v", res)
	}
	if got := f.image(t); got != "example.com/addon:1.0" {
		t.Errorf("the release's Deployment after the refusal: %s", got)
	}
}
