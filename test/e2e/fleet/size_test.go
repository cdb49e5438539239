package fleet_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
)

// maxClusters is spec.clusters' MaxItems in the CRD.
const maxClusters = 400

// A fleet of the most clusters the CRD allows, each cluster's status
// entry at its largest (the sizes of the arithmetic beside the marker in
// api/v1alpha1/clusterversion_types.go), is stored by the API server,
// under the 1.25 MiB the controller lets an object grow to; a fleet of
// one cluster more is refused at create.
func TestFleetStatusAtItsLargestFits(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 3*time.Minute, "fleet-size", "")
	ctx, dyn, ns := e.ctx, e.dyn, e.ns
	f := e.fleets()

	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			// 160 bytes, an EKS ARN's or GKE resource name's largest.
			out[i] = fmt.Sprintf("%s/%05d", strings.Repeat("p", 154), i)
		}
		return out
	}
	version := strings.Repeat("v", 32)
	at := func(sp *v1alpha1.ClusterVersionSpec) {
		for i := range sp.Clusters {
			sp.Clusters[i].Version = version
		}
	}
	f.apply("largest", "127.0.0.1:1", ids(maxClusters), at)

	cv := f.get("largest")
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	s := func(n int) string { return strings.Repeat("x", n) }
	var pools []v1alpha1.NodePoolStatus
	for i := range 5 {
		pools = append(pools, v1alpha1.NodePoolStatus{ID: fmt.Sprintf("%s%02d", s(38), i), Version: version})
	}
	for _, c := range cv.Spec.Clusters {
		cv.Status.Clusters = append(cv.Status.Clusters, v1alpha1.FleetClusterStatus{
			ID: c.ID, Wave: s(63), Phase: v1alpha1.ClusterReverting, Master: version, NodePools: pools,
			Previous: &v1alpha1.RecordedVersions{Master: version, NodePools: pools}, InService: true, Available: true,
			Operation: &v1alpha1.PluginOperation{ID: s(128), Type: s(32), Action: v1alpha1.ActionUpgradeNodePool,
				NodePool: s(40), Version: version, StartedAt: now, Progress: s(64)},
			Member:    &v1alpha1.MemberRun{Run: s(63), Phase: v1alpha1.RunRolledBack, FinishedAt: &now},
			StartedAt: &now, FinishedAt: &now, Message: s(256)})
	}
	msg := s(1024)
	cv.Status.Message, cv.Status.Cause, cv.Status.Phase, cv.Status.Wave = msg, msg, v1alpha1.FleetReverting, s(63)
	for _, typ := range []string{"Ready", "Reconciling", "Stalled", "WaitingForApproval", "PluginReachable"} {
		cv.Status.Conditions = append(cv.Status.Conditions, metav1.Condition{Type: typ, Status: "False", Reason: s(64), Message: msg, LastTransitionTime: now})
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := dyn.Resource(clusterVersions).Namespace(ns).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("the status of %d clusters at their largest was refused: %.1000s", maxClusters, err)
	}
	data, _ := json.Marshal(stored.Object)
	t.Logf("%d clusters at their largest: %d bytes stored (%d per cluster)", maxClusters, len(data), len(data)/maxClusters)
	if limit := fleet.MaxObjectBytes; len(data) > limit {
		t.Errorf("the object is %d bytes, over the %d the controller lets it grow to", len(data), limit)
	}

	more := ids(maxClusters + 1)
	cv2 := &v1alpha1.ClusterVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: "one-more", Namespace: ns},
		Spec:       v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, OpsEndpoint: v1alpha1.OpsEndpoint{Endpoint: "127.0.0.1:1", Insecure: true}},
	}
	for _, id := range more {
		cv2.Spec.Clusters = append(cv2.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "1.31.0"})
	}
	obj, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(cv2)
	delete(obj, "status")
	_, err = dyn.Resource(clusterVersions).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("must have at most %d items", maxClusters)) {
		t.Errorf("a fleet of %d clusters: %.1000v; want it refused at create, at most %d", maxClusters+1, err, maxClusters)
	}
}
