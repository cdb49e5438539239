package apps_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// A controller SIGKILLed while a canary holds a step leaves the rollout
// where it was: the next controller goes on at the same step, weight and
// pause, with the same canary Deployment, and a promotion moves it on.
func TestControllerKilledMidCanaryResumesAtTheSameStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.grant("deployer")
	e.deployment("web", "registry.example.com/web:v1", 10)
	first := e.startController("ctl-first")
	app := canaryRollout(e.ns, "web", "v2", []v1alpha1.AppCanaryStep{{Weight: 20, Pause: 300}, {Weight: 60, Pause: 300}, {Weight: 100}})
	if err := e.kc.Create(e.ctx, app); err != nil {
		t.Fatal(err)
	}
	held := e.waitStep("web", 0, 20)
	canary := e.getDeployment("web-canary")
	first.Kill()

	e.startController("ctl-second")
	time.Sleep(2 * time.Second) // ten of the second controller's polls
	again := e.rollout("web")
	if st := again.Status; st.Phase != v1alpha1.AppDeploying || st.CanaryStep != 0 || st.CanaryWeight != 20 || !st.PauseStartedAt.Equal(held.Status.PauseStartedAt) || st.Attempt != 1 {
		t.Errorf("after the restart: %+v; want step 0 at 20%%, paused since %s, attempt 1", st, held.Status.PauseStartedAt)
	}
	if c := e.getDeployment("web-canary"); c.UID != canary.UID || *c.Spec.Replicas != 2 {
		t.Errorf("canary after the restart: uid %s (was %s), replicas %d; want the same one at 2", c.UID, canary.UID, *c.Spec.Replicas)
	}
	e.wantReplicaSets(map[string]int32{"web:registry.example.com/web:v1": 8, "web-canary:registry.example.com/web:v2": 2})

	e.annotate("web", v1alpha1.AnnotationPromote, "go")
	e.waitStep("web", 1, 60)
	e.wantReplicaSets(map[string]int32{"web:registry.example.com/web:v1": 4, "web-canary:registry.example.com/web:v2": 6})
}

// canaryRollout is a Canary AppRollout of Deployment name acting as
// ServiceAccount deployer.
func canaryRollout(ns, name, version string, steps []v1alpha1.AppCanaryStep) *v1alpha1.AppRollout {
	return &v1alpha1.AppRollout{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.AppRolloutSpec{
			Version: version, ServiceAccountName: "deployer",
			UpgradeStrategy: v1alpha1.AppUpgradeStrategy{
				Type:   v1alpha1.StrategyCanary,
				Canary: &v1alpha1.AppCanary{Enabled: true, Steps: steps},
			},
		},
	}
}
