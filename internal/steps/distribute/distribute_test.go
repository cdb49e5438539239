package distribute_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/distribute"
)

func TestMain(m *testing.M) {
	distribute.Poll = 200 * time.Millisecond
	testenv.Main(m)
}

// On the local cluster the nodes are kwok's: a Job's pod runs nowhere
// and succeeds after kwok's delay (or exits 1 when its image tag says
// "fail"). These tests prove the Jobs' shape, placement, waiting,
// failure and clean-up, not a copy of files.

var artifacts = map[string]string{"k0s": "registry.example/ec/k0s:1.34", "images": "registry.example/ec/images:1.34"}

func spec(ns, image string) v1alpha1.DistributeStep {
	return v1alpha1.DistributeStep{
		Namespace: ns, Image: image, Artifacts: artifacts, Airgap: true, Installation: "20261129120000",
		Command:   []string{"/bin/sh", "-ex", "-c", "local-artifact-mirror pull binaries --data-dir /embedded-cluster"},
		Env:       []v1alpha1.NameValue{{Name: "APP_SLUG", Value: "shop"}},
		SecretEnv: []v1alpha1.SecretEnvVar{{Name: "LOCAL_ARTIFACT_MIRROR_LICENSE_ID", Secret: "license", Key: "LICENSE_ID"}},
	}
}

func newEnv(t *testing.T) *clienttest.Env {
	e := clienttest.New(t)
	lic := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "license", Namespace: e.NS}, Data: map[string][]byte{"LICENSE_ID": []byte("lic-123")}}
	if _, err := e.Clientset.CoreV1().Secrets(e.NS).Create(context.Background(), lic, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

func executor(t *testing.T, e *clienttest.Env, s v1alpha1.DistributeStep, attempt int) *distribute.Executor {
	t.Helper()
	ex, err := distribute.New(s, step.RunAttempt{Run: "run-" + e.NS, Attempt: attempt}, "artifacts", time.Time{}, 2*time.Minute,
		distribute.Clients{Applier: e.Applier, Clientset: e.Clientset})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// drive calls Run as the engine does until the step ends.
func drive(t *testing.T, ex *distribute.Executor) step.Result {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		res, err := ex.Run(context.Background())
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.Status != step.Running {
			return res
		}
		time.Sleep(res.After)
	}
	t.Fatal("the step did not end in a minute")
	return step.Result{}
}

func jobs(t *testing.T, e *clienttest.Env) []batchv1.Job {
	t.Helper()
	list, err := e.Clientset.BatchV1().Jobs(e.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if j.DeletionTimestamp == nil {
			out = append(out, j)
		}
	}
	return out
}

func secrets(t *testing.T, e *clienttest.Env) []string {
	t.Helper()
	list, err := e.Clientset.CoreV1().Secrets(e.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}

// embedded-cluster's artifacts-config-hash, computed here from its
// definition (sha256 of the artifacts as JSON, ten hex digits).
func configHash(t *testing.T) string {
	raw, err := json.Marshal(artifacts)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:10]
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
