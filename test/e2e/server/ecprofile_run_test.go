package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// The embedded-cluster profile through the API, as embedded-cluster's
// wizard drives it: 2.16.0 to 2.17.0 succeeds component by component in
// embedded-cluster's order (one artifact Job per node in its shape; one
// autopilot Plan, accepted by k0s's CRD, moving every node and deleted
// after, though the server was killed while autopilot worked; the
// ClusterConfig's images and overrides; the extension it drops
// uninstalled; a new Installation Installed, the earlier one left; a
// support bundle listed and downloaded). Then 2.17.1, whose admin console
// never becomes Ready, fails and rolls back: the add-ons to their
// revisions, the ClusterConfig restored, its Installation Failed, and
// infra/status Failed with the cause.
func TestEmbeddedClusterProfileThroughTheAPI(t *testing.T) {
	t.Parallel()
	doc := requireECDocument(t)
	w := newECWorld(t)
	jobs := w.jobsSeen(t)
	catalog := repoRoot() + "/examples/embedded-cluster"
	s := w.serve("--catalog", catalog)
	token := s.login(adminPassword)

	// The server is killed while autopilot works; the next one watches
	// the same Plan on.
	w.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = true })
	s.must(http.StatusOK, "POST", infraUpgrade, token, map[string]any{"targetVersion": "2.17.0+k8s-1.34"}, nil)
	for !w.autopilotPlanLeft(t) {
		sleep()
	}
	s.kill()
	w.standIn.Set(func(a *testenv.AutopilotStandIn) { a.Hold = false })
	s = w.serve("--catalog", catalog)
	token = s.login(adminPassword)
	p := waitInfra(t, s, doc, token)
	if p.Status.State != "Succeeded" || !slices.Equal(componentNames(p), ecComponents) {
		t.Fatalf("upgrade to 2.17.0: %s with components %q, want Succeeded with %q\n%s\n%s", p.Status.State, componentNames(p), ecComponents, p.Logs, s.log)
	}
	for _, c := range p.Components {
		if c.Status.State != "Succeeded" {
			t.Errorf("component %s: %+v", c.Name, c.Status)
		}
	}
	var pinned []string
	for _, j := range jobs() {
		if strings.HasPrefix(j.Name, "copy-artifacts-") && j.Spec.Template.Spec.NodeName == strings.TrimPrefix(j.Name, "copy-artifacts-") {
			pinned = append(pinned, j.Spec.Template.Spec.NodeName)
		}
	}
	if slices.Sort(pinned); !slices.Equal(pinned, []string{"node-0", "node-1", "node-2"}) {
		t.Errorf("artifact Jobs pinned to %v, want one per node", pinned)
	}
	if n := len(w.standIn.Seen()); n != 1 {
		t.Errorf("autopilot saw %d Plans, want 1", n)
	}
	if w.autopilotPlanLeft(t) {
		t.Error("the autopilot Plan is left after the upgrade")
	}
	if w.clusterConfig(t, "images", "pause", "version") != "3.10" || w.clusterConfig(t, "images", "coredns", "version") != "1.12.1" ||
		w.clusterConfig(t, "network", "clusterDomain") != "cluster.local" {
		t.Errorf("ClusterConfig images %v, network %v", w.clusterConfig(t, "images"), w.clusterConfig(t, "network"))
	}
	if got := w.installations(t); !slices.Equal(got, []string{"2.16.0+k8s-1.33=Installed", "2.17.0+k8s-1.34=Installed"}) {
		t.Errorf("Installations %v, want 2.16.0's left and 2.17.0's Installed", got)
	}
	if _, err := w.cs.AppsV1().Deployments("ingress-nginx").Get(w.ctx, "legacy-metrics", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the extension 2.17.0 drops is still there: %v", err)
	}
	if _, ok := w.infraBundle(t, s, p, token)["runs/embedded-cluster-2.17.0.report.md"]; !ok {
		t.Error("the support bundle of the upgrade to 2.17.0 lacks its run's report")
	}

	p = upgradeTo(t, s, doc, token, "2.17.1+k8s-1.34")
	if p.Status.State != "Failed" || !containsAll(p.Status.Description, "failed and was rolled back, restore verified", "admin-console") {
		t.Fatalf("upgrade to 2.17.1: %+v, want Failed and rolled back, naming the admin console\n%s", p.Status, p.Logs)
	}
	if got := w.installations(t); !slices.Equal(got, []string{"2.16.0+k8s-1.33=Installed", "2.17.0+k8s-1.34=Installed", "2.17.1+k8s-1.34=Failed"}) {
		t.Errorf("Installations %v, want 2.17.1's Failed", got)
	}
	if v := w.clusterConfig(t, "images", "coredns", "version"); v != "1.12.1" {
		t.Errorf("the ClusterConfig's coredns is %v after the rollback, want 2.17.0's 1.12.1", v)
	}
	if img := w.image(t, "embedded-cluster", "embedded-cluster-operator"); img != "example.com/ec/operator:2.17.0" {
		t.Errorf("the operator runs %s after the rollback, want 2.17.0's", img)
	}

	// The support bundle collected as the failed upgrade ended, listed
	// in infra/status and downloaded; the first upgrade's was replaced.
	files := w.infraBundle(t, s, p, token)
	for _, name := range []string{"runs/embedded-cluster-2.17.1.yaml", "runs/embedded-cluster-2.17.1.report.md", "nodes.yaml",
		"namespaces/kotsadm/deployments.yaml", "namespaces/embedded-cluster/events.txt", "namespaces/" + w.runsNS + "/secrets.yaml"} {
		if _, ok := files[name]; !ok {
			t.Errorf("the support bundle lacks %s", name)
		}
	}
	if !strings.Contains(files["runs/embedded-cluster-2.17.1.report.md"], "rolled back") {
		t.Errorf("the bundle's report does not say the run was rolled back:\n%s", files["runs/embedded-cluster-2.17.1.report.md"])
	}
	if ids := w.keptBundles(t); len(ids) != 1 {
		t.Errorf("support bundles kept in the cluster: %v, want the last one only", ids)
	}
	// A run's bundle, collected on demand.
	code, body := s.call("GET", "/api/runs/embedded-cluster-2.17.1/support-bundle", token, nil)
	if _, ok := testenv.Untar(t, body)["runs/embedded-cluster-2.17.1.yaml"]; code != http.StatusOK || !ok {
		t.Errorf("the run's support bundle: %d", code)
	}
}
