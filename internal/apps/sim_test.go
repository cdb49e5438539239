package apps

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/analysis"
)

// world is a cluster for Decide's scenarios, in memory: what the
// actions write lands here, and the test says what the cluster does in
// return (pods ready, a Job's end). A fake for pure logic only: the
// reconciler's real IO is tested on the local control plane
// (test/e2e/apps).
type world struct {
	t      *testing.T
	app    *v1alpha1.AppRollout
	dep    *appsv1.Deployment
	canary *appsv1.Deployment
	jobs   map[string]*batchv1.Job
	saved  *appsv1.Deployment // the capture
	now    time.Time
	trace  []string
	// settle is what the cluster does after each action (nil: every
	// Deployment becomes ready at once, and Jobs stay running).
	settle func(w *world)
	// value is what the analysis's metrics measure now.
	value float64
	// active and preview are a blue-green rollout's Services; savedSvcs
	// their capture.
	active, preview       *corev1.Service
	savedActive, savedPre *corev1.Service
	previewDep            *appsv1.Deployment
	// stableSvc, canarySvc and route are a routed canary's.
	stableSvc, canarySvc *corev1.Service
	route, savedRoute    *gatewayv1.HTTPRoute
}

func newWorld(t *testing.T, spec v1alpha1.AppRolloutSpec, replicas int32, image string) *world {
	labels := map[string]string{"app": "shop"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "shop", Image: image}}},
			},
		},
	}
	w := &world{t: t, dep: dep, jobs: map[string]*batchv1.Job{}, now: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)}
	w.app = &v1alpha1.AppRollout{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", UID: "uid-1", Generation: 1}, Spec: spec}
	ready(dep)
	return w
}

// ready makes a Deployment Current by kstatus: its pods all updated,
// ready and available.
func ready(d *appsv1.Deployment) {
	if d == nil {
		return
	}
	n := replicasOf(d)
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
}

// unready makes a Deployment's new pods not ready yet.
func unready(d *appsv1.Deployment) {
	d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas = 0, 0, 0
}

func endJob(j *batchv1.Job, typ batchv1.JobConditionType, msg string) {
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Message: msg})
}

// step decides once, does the action in the world, and records it.
func (w *world) step() Decision {
	w.t.Helper()
	st := &w.app.Status
	o := Observed{App: w.app.DeepCopy(), Deployment: w.dep.DeepCopy(), Canary: w.canary.DeepCopy(), Now: w.now, Poll: 2 * time.Second}
	o.Migration = w.jobs[MigrationJobName(w.app, st.TargetVersion, st.Attempt)].DeepCopy()
	o.DownMigration = w.jobs[DownMigrationJobName(w.app, st.TargetVersion, st.Attempt)].DeepCopy()
	o.Measurements = w.measure()
	o.ActiveService, o.PreviewService, o.Preview = w.active.DeepCopy(), w.preview.DeepCopy(), w.previewDep.DeepCopy()
	o.StableHash = "hash-" + firstImage(w.dep)
	o.StableService, o.CanaryService, o.Route = w.stableSvc.DeepCopy(), w.canarySvc.DeepCopy(), w.route.DeepCopy()
	d := Decide(o)
	w.apply(o, &d)
	w.app.Status = d.Status
	line := fmt.Sprintf("%s %s", d.Status.Phase, d.Action)
	if d.Action == SetCanary {
		line += fmt.Sprintf(" %d%% %d+%d", d.Status.CanaryWeight, d.CanaryReplicas, d.StableReplicas)
	}
	if d.Action == Deploy {
		line += " " + d.Image
	}
	w.trace = append(w.trace, line)
	if w.settle != nil {
		w.settle(w)
	} else {
		ready(w.dep)
		ready(w.canary)
		ready(w.previewDep)
	}
	w.now = w.now.Add(d.RequeueAfter)
	return d
}

// run steps until the rollout waits on nothing (or n steps).
func (w *world) run(n int) {
	w.t.Helper()
	for range n {
		if d := w.step(); d.RequeueAfter == 0 {
			return
		}
	}
}

func (w *world) apply(o Observed, d *Decision) {
	st := &d.Status
	switch d.Action {
	case Capture:
		w.saved = w.dep.DeepCopy()
		w.savedActive, w.savedPre = w.active.DeepCopy(), w.preview.DeepCopy()
		w.savedRoute = w.route.DeepCopy()
		st.Backup = &v1alpha1.BackupRef{Objects: 1, Absent: 1}
	case CreateMigration:
		w.jobs[st.MigrationJob] = migrationJob(w.app, st.Attempt, st.MigrationJob, false)
	case CreateDownMigration:
		w.jobs[st.Rollback.DownMigrationJob] = migrationJob(w.app, st.Attempt, st.Rollback.DownMigrationJob, true)
	case SetWeights:
		c := o.App.Spec.UpgradeStrategy.Canary
		w.route = weighRoute(w.route, c.StableService, c.CanaryService, d.Weight)
	case RouteBack:
		c := o.App.Spec.UpgradeStrategy.Canary
		w.route = weighRoute(w.route, c.StableService, c.CanaryService, 0)
		w.stableSvc.Spec.Selector, w.canarySvc.Spec.Selector, w.canary = st.Traffic.StableSelector, st.Traffic.CanarySelector, nil
	case SetCanary:
		if st.Traffic != nil {
			w.stableSvc.Spec.Selector = pinned(st.Traffic.StableSelector, o.StableHash)
			w.canarySvc.Spec.Selector = canarySelector(st.Traffic)
		}
		w.canary = canaryDeployment(o.App, st.Attempt, w.dep, d.Image, d.CanaryReplicas)
		w.dep.Spec.Replicas = ptr.To(d.StableReplicas)
		w.dep.Generation++
	case Deploy:
		withNewVersion(&w.dep.Spec.Template, d.Image, o.App.Spec.UpgradeStrategy.HealthCheck)
		if canaryEnabled(o.App) {
			w.dep.Spec.Replicas = ptr.To(st.Replicas)
		}
		w.dep.Generation++
		if routing(o.App) == nil {
			w.canary = nil
		}
	case Restore:
		w.dep, w.canary, w.previewDep = w.saved.DeepCopy(), nil, nil
		w.route = w.savedRoute.DeepCopy()
		w.active, w.preview = w.savedActive.DeepCopy(), w.savedPre.DeepCopy()
		st.Rollback.Restored = true
	case SetPreview:
		w.active.Spec.Selector = pinnedSelector(st.BlueGreen, o.StableHash)
		w.preview.Spec.Selector = previewSelector(st.BlueGreen)
		w.previewDep = trackDeployment(o.App, st.Attempt, w.dep, d.Image, st.Replicas, previewName(o.App), trackPreview)
	case SwitchActive:
		w.active.Spec.Selector = previewSelector(st.BlueGreen)
	case SwitchBack:
		w.active.Spec.Selector, w.preview.Spec.Selector, w.previewDep = st.BlueGreen.ActiveSelector, st.BlueGreen.PreviewSelector, nil
	}
}

func (w *world) wantTrace(want ...string) {
	w.t.Helper()
	if got := strings.Join(w.trace, "\n"); got != strings.Join(want, "\n") {
		w.t.Errorf("trace:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	w.trace = nil
}

// measure takes the due metrics' measurements of w.value, judged by
// their conditions as the reconciler's would be.
func (w *world) measure() map[string]v1alpha1.Measurement {
	out := map[string]v1alpha1.Measurement{}
	for _, m := range DueMetrics(w.app, w.now) {
		conds, errs := analysis.Compile(m, nil)
		if len(errs) > 0 {
			w.t.Fatal(errs)
		}
		out[m.Name], _ = analysis.Measure(context.Background(), constant(w.value), conds, w.now)
	}
	return out
}

// constant is a provider that measures one value.
type constant float64

func (c constant) Measure(context.Context, time.Time) (any, error) { return []any{float64(c)}, nil }
