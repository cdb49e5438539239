package pvcsbound_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/gates/pvcsbound"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The local cluster has no provisioner: claims of storageClassName
// "manual" bind to static volumes of the same class. Each volume is made
// for one claim, as a provisioner makes it: its claimRef names the claim
// with its UID, so the tests, run in parallel, never take each other's
// volumes, and the PV controller binds the claim at once instead of at
// its next resync (15s).
const class = "manual"

// createClaim creates a 1Gi claim labelled app=<app>.
func createClaim(t *testing.T, e *clienttest.Env, name, app string) *corev1.PersistentVolumeClaim {
	t.Helper()
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	c, err := e.Clientset.CoreV1().PersistentVolumeClaims(e.NS).Create(context.Background(), c, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create claim %s: %v", name, err)
	}
	return c
}

// createVolume creates a hostPath volume for the claim, and deletes it
// after the test. It reports errors instead of failing the test, so that
// it can run in a goroutine.
func createVolume(t *testing.T, e *clienttest.Env, claim *corev1.PersistentVolumeClaim) error {
	name := clienttest.Name(t)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/upshift-test/" + name}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
		},
	}
	if _, err := e.Clientset.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create volume for %s: %w", claim.Name, err)
	}
	e.Cleanup(t, func(ctx context.Context) error {
		return e.Clientset.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return nil
}

func ptr[T any](v T) *T { return &v }

// check builds the gate as the engine does and runs it.
func check(t *testing.T, e *clienttest.Env, spec v1alpha1.PVCsBoundGate, timeout time.Duration) (step.Result, time.Duration) {
	t.Helper()
	g, err := gates.New(v1alpha1.Gate{PVCsBound: &spec}, timeout, e.Set, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := g.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	took := time.Since(start)
	t.Logf("%s: %s in %s", res.Status, res.Message, took.Round(time.Millisecond))
	return res, took
}

func want(t *testing.T, res step.Result, outcome step.Status, message string) {
	t.Helper()
	if res.Status != outcome || res.Message != message {
		t.Errorf("Check = %s %q\nwant     %s %q", res.Status, res.Message, outcome, message)
	}
}

func TestPassesWhenClaimsBind(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	for _, name := range []string{"data-0", "data-1"} {
		if err := createVolume(t, e, createClaim(t, e, name, "db")); err != nil {
			t.Fatal(err)
		}
	}
	createClaim(t, e, "other", "cache") // Pending, but the selector leaves it out
	res, _ := check(t, e, v1alpha1.PVCsBoundGate{Namespace: e.NS, Selector: "app=db"}, 20*time.Second)
	want(t, res, step.Succeeded, "2 PVCs Bound")
}

// The gate waits: the volume comes after the gate started, the claim binds
// and the gate passes.
func TestWaitsForAClaimToBind(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	c := createClaim(t, e, "data-0", "db")
	created := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		created <- createVolume(t, e, c)
	}()
	res, took := check(t, e, v1alpha1.PVCsBoundGate{Namespace: e.NS}, 20*time.Second)
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	want(t, res, step.Succeeded, "1 PVC Bound")
	if took < time.Second {
		t.Errorf("Check passed after %s, before the volume existed", took)
	}
}

// A claim with no volume stays Pending; when the time runs out, the gate
// names it.
func TestPendingClaimTimesOut(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	if err := createVolume(t, e, createClaim(t, e, "data-0", "db")); err != nil {
		t.Fatal(err)
	}
	createClaim(t, e, "orphan", "db")
	res, _ := check(t, e, v1alpha1.PVCsBoundGate{Namespace: e.NS}, 5*time.Second)
	want(t, res, step.Failed, fmt.Sprintf("timed out after 5s: 1 of 2 PVCs in %s still Pending: orphan", e.NS))
}

func TestNothingMatchesFails(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	res, took := check(t, e, v1alpha1.PVCsBoundGate{Namespace: e.NS}, time.Minute)
	want(t, res, step.Failed, "no PVCs in "+e.NS)

	createClaim(t, e, "data-0", "db")
	res, took2 := check(t, e, v1alpha1.PVCsBoundGate{Namespace: e.NS, Selector: "app=dv"}, time.Minute)
	want(t, res, step.Failed, fmt.Sprintf(`no PVCs match "app=dv" in %s`, e.NS))
	if took+took2 > 10*time.Second {
		t.Errorf("Checks took %s and %s, want failures on the first list", took, took2)
	}
}

// A user who may not list claims gets an error at once, not a timeout.
func TestForbiddenIsAnError(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	cfg, err := testenv.Cluster(t).UserRESTConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pvcsbound.New(v1alpha1.PVCsBoundGate{Namespace: e.NS}, time.Minute, cs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := g.Check(context.Background())
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "watch persistentvolumeclaims in "+e.NS) {
		t.Errorf("Check = %+v, %v; want a Forbidden error naming the claims", res, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Check took %s", took)
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, spec := range []v1alpha1.PVCsBoundGate{
		{Selector: "app=db"},
		{Namespace: "db", Selector: "app in (db"},
	} {
		if _, err := pvcsbound.New(spec, time.Minute, nil); !errors.Is(err, pvcsbound.ErrInvalidSpec) {
			t.Errorf("New(%+v) = %v, want ErrInvalidSpec", spec, err)
		}
	}
}
