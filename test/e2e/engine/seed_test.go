package engine_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// An image step sets its images from the copy of the workload its
// stage's backup read a moment before, on the condition that the workload
// has not moved since: between the backup's save and the step's first
// write of the workload, nobody reads it. This holds for the first stage,
// whose snapshot is read ahead beside preflight, and for a later one.
func TestImageStepWritesFromItsBackupsRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	write(t, plan, `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: shop-2.0.0}
spec:
  version: 2.0.0
  stages:
  - name: web
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.0"}}
  - name: web-again
    steps:
    - name: web-again
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:2.0.1"}}
`)
	w.mustExit(0, nil, "apply", "-f", plan)
	time.Sleep(time.Second) // let the audit log's last batch land
	events, err := w.c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	evs := localcluster.ByUser(events, upshiftUser)
	slices.SortFunc(evs, func(a, b localcluster.AuditEvent) int {
		return a.RequestReceivedTimestamp.Compare(b.RequestReceivedTimestamp)
	})
	web := func(e localcluster.AuditEvent) bool {
		r := e.ObjectRef
		return r != nil && r.Resource == "deployments" && r.Namespace == "shop" && r.Name == "web" && r.Subresource == "" && !e.DryRun()
	}
	for _, stage := range []string{"web", "web-again"} {
		// The backup's read-back of its Secret ends its save.
		readBack := -1
		for i, e := range evs {
			if e.Verb == "get" && strings.Contains(e.RequestURI, "/secrets/upshift-backup-shop-2-0-0-"+stage+"-1-") {
				readBack = i
			}
		}
		if readBack < 0 {
			t.Fatalf("stage %s: no read-back of its backup in the audit log", stage)
		}
		reads := 0
		wrote := false
		for _, e := range evs[readBack+1:] {
			if !web(e) {
				continue
			}
			if e.Verb == "patch" {
				wrote = true
				break
			}
			if e.Verb == "get" {
				reads++
			}
		}
		if !wrote {
			t.Fatalf("stage %s: the step never wrote deployment shop/web after its backup", stage)
		}
		if reads > 0 {
			t.Errorf("stage %s: the step read deployment shop/web %d time(s) between its backup and its write; want none (it starts from the backup's copy)", stage, reads)
		}
	}
	w.waitImages("app=web", "app", "example.com/shop/web:2.0.1")
}
