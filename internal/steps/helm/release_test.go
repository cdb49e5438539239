package helm_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/helm"
)

// A release keeps the revision it starts a stage from, and a rollback
// from a backup holding it returns it there; the release's objects are
// its to put back. A backup without its revision fails the rollback,
// naming the release.
func TestReleaseKeepsAndRevertsItsRevision(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if res := f.run(t, "1.0.0", "1.0", time.Minute); res.Status != step.Succeeded {
		t.Fatalf("install: %+v", res)
	}
	rel := helm.NewRelease("addon", f.NS, time.Minute, f.clients)
	kept, err := rel.Keep(ctx)
	if err != nil || kept != (v1alpha1.HelmRevision{Release: "addon", Namespace: f.NS, Revision: 1}) {
		t.Fatalf("Keep = %+v, %v; want addon at revision 1", kept, err)
	}
	if res := f.run(t, "2.0.0", "2.0", time.Minute); res.Status != step.Succeeded {
		t.Fatalf("upgrade: %+v", res)
	}

	done, err := rel.Revert(ctx, &v1alpha1.BackupRef{HelmReleases: []v1alpha1.HelmRevision{kept}})
	if err != nil || done.Status != step.Succeeded {
		t.Fatalf("Revert = %+v, %v", done, err)
	}
	mustContain(t, "Revert", done.Message, "rolled back to revision 1")
	if got := f.image(t); got != "example.com/addon:1.0" {
		t.Errorf("image after the revert = %s, want example.com/addon:1.0", got)
	}
	mine := &unstructured.Unstructured{}
	mine.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "addon", "meta.helm.sh/release-namespace": f.NS})
	other := &unstructured.Unstructured{}
	other.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "addon", "meta.helm.sh/release-namespace": "elsewhere"})
	if done.Owns == nil || !done.Owns(mine) || done.Owns(other) {
		t.Errorf("Owns: want the release's objects (by Helm's annotations) and no other's")
	}

	missing, err := rel.Revert(ctx, &v1alpha1.BackupRef{})
	if err != nil || missing.Status != step.Failed {
		t.Fatalf("Revert from a backup without the revision = %+v, %v; want Failed", missing, err)
	}
	mustContain(t, "message", missing.Message, "no revision of release "+f.NS+"/addon")
}
