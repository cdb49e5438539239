package apps

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Observed is what a reconcile saw: the rollout, and what it acts on as
// read by the rollout's ServiceAccount (nil: not found).
type Observed struct {
	App        *v1alpha1.AppRollout
	Deployment *appsv1.Deployment
	Canary     *appsv1.Deployment
	// Migration and DownMigration are the Jobs of the names the attempt's
	// migration and down-migration have, whoever made them.
	Migration     *batchv1.Job
	DownMigration *batchv1.Job
	// ActiveService, PreviewService and Preview are a blue-green
	// rollout's Services and preview Deployment; StableHash is the
	// pod-template-hash of the Deployment's current ReplicaSet.
	ActiveService, PreviewService *corev1.Service
	Preview                       *appsv1.Deployment
	StableHash                    string
	// StableService, CanaryService and Route are a traffic-routed
	// canary's Services and HTTPRoute.
	StableService, CanaryService *corev1.Service
	Route                        *gatewayv1.HTTPRoute
	// Before is the rollout spec.after names (nil: none, or not found);
	// Next are those whose spec.after names this one.
	Before *v1alpha1.AppRollout
	Next   []*v1alpha1.AppRollout
	// Measurements are those of the analysis's metrics that were due
	// (DueMetrics), by metric name.
	Measurements map[string]v1alpha1.Measurement
	// Pending are the due metrics whose measurement is under way (a Job
	// runs), by name: looked at again after Poll.
	Pending map[string]bool
	Now     time.Time
	// Poll is how soon to look again at what the rollout waits for (a
	// Job, pods becoming ready).
	Poll time.Duration
}

// Action is the one write a reconcile does before saving the status.
type Action int

const (
	// None: the status alone changes.
	None Action = iota
	// Capture backs up the Deployment (and that the canary is absent)
	// into status.backup.
	Capture
	// CreateMigration creates the attempt's migration Job.
	CreateMigration
	// SetCanary makes the canary Deployment CanaryReplicas strong and
	// scales the stable one to StableReplicas.
	SetCanary
	// Deploy puts the new version on the stable Deployment at its full
	// replicas, then deletes the canary: a rolling update, or a canary's
	// promotion.
	Deploy
	// Restore puts status.backup back and verifies it
	// (status.rollback.restored and differences say how it went).
	Restore
	// CreateDownMigration creates the attempt's down-migration Job.
	CreateDownMigration
	// SetPreview pins the active Service to the stable pods, points the
	// preview Service at the preview's, and makes the preview Deployment
	// run the new version at the rollout's replicas.
	SetPreview
	// SwitchActive points the active Service at the preview's pods.
	SwitchActive
	// SwitchBack points the Services back at the Deployment's pods, as
	// they were found, and deletes the preview.
	SwitchBack
	// SetWeights sends the step's weight of the HTTPRoute to the canary
	// Service.
	SetWeights
	// RouteBack sends the whole route to the stable Service again, gives
	// the Services their selectors back and deletes the canary.
	RouteBack
)

var actionNames = [...]string{"none", "capture", "create migration", "set canary", "deploy", "restore", "create down-migration",
	"set preview", "switch active", "switch back", "set weights", "route back"}

func (a Action) String() string { return actionNames[a] }

// Event is what a decision tells in the rollout's events.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Decision is what a reconcile does: one action, then the status saved.
type Decision struct {
	Action Action
	// Image is the new version's image (SetCanary, Deploy).
	Image string
	// Weight is SetWeights' canary share, in percent.
	Weight int32
	// CanaryReplicas and StableReplicas are SetCanary's sizes.
	CanaryReplicas, StableReplicas int32
	// Status is the rollout's status once the action is done.
	Status v1alpha1.AppRolloutStatus
	Events []Event
	// RequeueAfter is when to look again (0: when the rollout changes).
	RequeueAfter time.Duration
}

// soon is the requeue of a decision that saved a transition and has the
// next to decide at once (a status write does not wake the reconcile).
const soon = time.Millisecond

// missingPoll is how often a rollout whose Deployment does not exist
// looks for it again: that waits on a person, not on the cluster.
const missingPoll = 15 * time.Second

// DefaultProgressDeadline is spec.progressDeadlineSeconds' default.
const DefaultProgressDeadline = 600 * time.Second

// Decide is the one thing a reconcile of o.App does. It reads nothing
// but o, so each transition is a table test.
func Decide(o Observed) Decision {
	// now to the second: what the status keeps of a time
	x := &decider{o: o, app: o.App, st: o.App.Status.DeepCopy(), now: metav1.NewTime(o.Now.Truncate(time.Second))}
	if x.st.HandledActions == nil {
		x.st.HandledActions = map[string]string{}
	}
	d := x.decide()
	if len(x.st.HandledActions) == 0 {
		x.st.HandledActions = nil
	}
	x.st.ObservedGeneration = o.App.Generation
	d.Status = *x.st
	project(&d.Status, o.App, x.now)
	d.Events = append(x.events, d.Events...)
	return d
}

// decider holds a decision being made: st is the status it makes.
type decider struct {
	o      Observed
	app    *v1alpha1.AppRollout
	st     *v1alpha1.AppRolloutStatus
	now    metav1.Time
	events []Event
}

func (x *decider) decide() Decision {
	if d, ok := x.actions(); ok {
		return d
	}
	if d, ok := x.group(); ok {
		return d
	}
	if x.app.Spec.Paused && moving(x.st.Phase) {
		return x.paused()
	}
	x.st.NextWindow = nil // set again by outsideWindow while the rollout waits for one
	x.resumed()
	switch x.st.Phase {
	case "", v1alpha1.AppPending:
		return x.begin()
	case v1alpha1.AppMigrating:
		return x.migrating()
	case v1alpha1.AppDeploying:
		return x.deploying()
	case v1alpha1.AppHealthChecking:
		return x.healthChecking()
	case v1alpha1.AppFailed:
		return x.rollingBack()
	case v1alpha1.AppHealthy:
		if x.app.Spec.Version != x.st.CurrentVersion {
			return x.start()
		}
	case v1alpha1.AppRolledBack:
		if x.app.Spec.Version != x.st.TargetVersion {
			return x.start()
		}
	}
	return Decision{}
}

// moving tells a phase that goes forward (what spec.paused holds and
// upshift.dev/abort stops); a rollback is never held.
func moving(p v1alpha1.AppPhase) bool {
	switch p {
	case "", v1alpha1.AppPending, v1alpha1.AppMigrating, v1alpha1.AppDeploying, v1alpha1.AppHealthChecking:
		return true
	}
	return false
}

// begin looks at the Deployment of a rollout never started: one already
// on spec.version is adopted as Healthy, any other is rolled out.
func (x *decider) begin() Decision {
	dep := x.o.Deployment
	if dep == nil {
		return x.missing()
	}
	if len(dep.Spec.Template.Spec.Containers) == 0 {
		return x.wait(v1alpha1.AppPending, fmt.Sprintf("deployment %s/%s has no containers: give it the application's container", dep.Namespace, dep.Name), missingPoll)
	}
	running := dep.Spec.Template.Spec.Containers[0].Image
	repo := repositoryOf(x.app.Spec.Image, running)
	if x.st.Attempt == 0 && runningVersion(repo, running) == x.app.Spec.Version {
		x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppHealthy, &x.now
		x.st.CurrentVersion, x.st.TargetVersion = x.app.Spec.Version, x.app.Spec.Version
		x.st.Message = fmt.Sprintf("deployment %s runs %s already", dep.Name, running)
		return Decision{}
	}
	return x.start()
}

// missing waits for the rollout's Deployment to exist.
func (x *decider) missing() Decision {
	msg := fmt.Sprintf("deployment %s/%s not found: create it, or name the rollout's Deployment in spec.deploymentName", x.app.Namespace, deploymentName(x.app))
	if x.st.Phase == "" {
		x.st.Phase = v1alpha1.AppPending
	}
	return x.wait(x.st.Phase, msg, missingPoll)
}

// wait keeps phase with a message, looking again after d.
func (x *decider) wait(phase v1alpha1.AppPhase, msg string, d time.Duration) Decision {
	if x.st.Phase != phase {
		x.st.Phase, x.st.PhaseStartedAt = phase, &x.now
	}
	x.st.Message = msg
	return Decision{RequeueAfter: d}
}

// start begins an attempt at spec.version: the Deployment is captured
// first, then the migration or the deployment begins.
func (x *decider) start() Decision {
	dep := x.o.Deployment
	if dep == nil || len(dep.Spec.Template.Spec.Containers) == 0 {
		return x.begin()
	}
	if why := x.servicesMissing(); why != "" {
		return x.wait(v1alpha1.AppPending, why, missingPoll)
	}
	if why := waitForBefore(x.app, x.o.Before); why != "" {
		phase := x.st.Phase
		if phase == "" || phase == v1alpha1.AppHealthy {
			phase = v1alpha1.AppPending
		}
		return x.wait(phase, why, missingPoll)
	}
	if d, wait := x.outsideWindow("the rollout to " + x.app.Spec.Version); wait {
		if x.st.Phase == "" {
			x.st.Phase, x.st.PhaseStartedAt = v1alpha1.AppPending, &x.now
		}
		return d
	}
	running := dep.Spec.Template.Spec.Containers[0].Image
	repo := repositoryOf(x.app.Spec.Image, running)
	if x.st.CurrentVersion == "" {
		x.st.CurrentVersion = runningVersion(repo, running)
	}
	x.st.TargetVersion = x.app.Spec.Version
	x.st.Attempt++
	x.st.StableImage = running
	x.st.Replicas = replicasOf(dep)
	x.st.CanaryStep, x.st.CanaryWeight = 0, 0
	x.st.CanaryStepStartedAt, x.st.PauseStartedAt, x.st.PausedAt = nil, nil, nil
	x.st.Backup, x.st.Rollback, x.st.MigrationJob, x.st.Analysis = nil, nil, "", nil
	x.startBlueGreen()
	x.startTraffic()
	x.st.PhaseStartedAt = &x.now
	next, what := v1alpha1.AppDeploying, "deploying"
	if x.app.Spec.UpgradeStrategy.MigrationJob != nil {
		next, what = v1alpha1.AppMigrating, "migrating"
	}
	x.st.Phase = next
	x.st.Message = fmt.Sprintf("attempt %d: %s %s → %s (%s); the Deployment is backed up first", x.st.Attempt, what, x.st.CurrentVersion, x.st.TargetVersion, x.app.Spec.UpgradeStrategy.Type)
	x.event(false, "RolloutStarted", fmt.Sprintf("rolling %s from %s to %s (%s, attempt %d)", dep.Name, running, repo+":"+x.st.TargetVersion, x.app.Spec.UpgradeStrategy.Type, x.st.Attempt))
	return Decision{Action: Capture, RequeueAfter: soon}
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// newImage is the image of the version rolled out.
func (x *decider) newImage() string {
	return repositoryOf(x.app.Spec.Image, x.st.StableImage) + ":" + x.st.TargetVersion
}

// deadline is spec.progressDeadlineSeconds.
func (x *decider) deadline() time.Duration {
	if s := x.app.Spec.ProgressDeadlineSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return DefaultProgressDeadline
}

// overdue tells whether what began at since has run past the deadline.
func (x *decider) overdue(since *metav1.Time) bool {
	return since != nil && x.o.Now.Sub(since.Time) > x.deadline()
}

func (x *decider) event(warning bool, reason, msg string) {
	x.events = append(x.events, Event{Warning: warning, Reason: reason, Message: msg})
}
