package controller

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/internal/kubeconfig"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// memberDrives runs spec.member on member clusters with Upshift's engine,
// as the UpgradePlan controller runs a plan: a runner.Session on the
// member cluster (reached through its kubeconfig Secret), driven in a
// goroutine, one per cluster at a time. The run's record and lease are on
// the member cluster, so what a drive did is read back from there: a
// controller restarted on any machine asks the member's run store and
// resumes a run nobody drives. It runs with the manager (Start).
type memberDrives struct {
	clients *impersonatedClients // reading kubeconfigs as a fleet's ServiceAccount
	runner  runner.Options
	log     logr.Logger
	// wake reconciles the fleet when one of its drives ends.
	wake func(types.NamespacedName)

	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	drives map[string]*memberDrive // by fleet and cluster
	// closed are fleets being deleted, by UID: none of their drives
	// starts again (stopFleet).
	closed map[types.UID]bool
	// opened keeps each cluster's session between reports, while its
	// kubeconfig and the fleet's generation stay: a report per poll
	// would otherwise build a session's clients every time.
	opened map[string]openedMember
}

type openedMember struct {
	kubeconfig [sha256.Size]byte
	generation int64
	member     *member
}

// memberDrive is one drive of a member run in this process.
type memberDrive struct {
	run    string
	cancel context.CancelFunc
	done   chan struct{}
	// err is why the drive ended without the run reaching an end (set
	// before done closes); failed: a person must act (a refusal, a plan
	// its cluster rejects), else the next report tries again.
	err    error
	failed bool
}

func (d *memberDrive) live() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func newMemberDrives(clients *impersonatedClients, o runner.Options, log logr.Logger, wake func(types.NamespacedName)) *memberDrives {
	ctx, cancel := context.WithCancel(context.Background())
	return &memberDrives{clients: clients, runner: o, log: log, wake: wake, base: ctx, stop: cancel, drives: map[string]*memberDrive{}, opened: map[string]openedMember{},
		closed: map[types.UID]bool{}}
}

// Start runs until the manager stops, then stops every drive (each run is
// saved as interrupted, for the next controller to resume).
func (m *memberDrives) Start(ctx context.Context) error {
	<-ctx.Done()
	m.stop()
	m.wg.Wait()
	return nil
}

// member is one cluster of a fleet, reached: its session and the plan it
// runs.
type member struct {
	key     types.NamespacedName
	uid     types.UID
	cluster v1alpha1.FleetCluster
	sess    *runner.Session
	plan    *v1alpha1.UpgradePlan
}

func (c *member) id() string { return c.key.String() + "/" + c.cluster.ID }

// errKubeconfig marks a kubeconfig Secret that cannot be read or used: a
// person must fix it, so the member operation fails.
var errKubeconfig = errors.New("kubeconfig")

// open reaches a member cluster: its kubeconfig Secret read as the fleet's
// ServiceAccount (never the controller's own rights), and a session with
// the kubeconfig's credentials, which are who the member plan acts as
// there.
func (m *memberDrives) open(ctx context.Context, cv *v1alpha1.ClusterVersion, clusterID string) (*member, error) {
	var c v1alpha1.FleetCluster
	for _, fc := range cv.Spec.Clusters {
		if fc.ID == clusterID {
			c = fc
		}
	}
	if c.ID == "" {
		return nil, fmt.Errorf("%w: cluster %s is not in spec.clusters", errKubeconfig, clusterID)
	}
	ref := kubeconfigRef(c)
	who := serviceAccountUser(cv.Namespace, cv.Spec.ServiceAccountName)
	cs, err := m.clients.as(who)
	if err != nil {
		return nil, err
	}
	s, err := cs.CoreV1().Secrets(cv.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("%w: read Secret %s as %s for cluster %s: %w", errKubeconfig, ref.Name, who, c.ID, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read Secret %s for cluster %s: %w", ref.Name, c.ID, err)
	}
	data, ok := s.Data[ref.Key]
	if !ok {
		return nil, fmt.Errorf("%w: Secret %s of cluster %s has no key %s: set kubeconfigSecretRef.key", errKubeconfig, ref.Name, c.ID, ref.Key)
	}
	key := types.NamespacedName{Namespace: cv.Namespace, Name: cv.Name}
	cacheKey, sum := key.String()+"/"+c.ID, sha256.Sum256(data)
	m.mu.Lock()
	o, ok := m.opened[cacheKey]
	m.mu.Unlock()
	if ok && o.kubeconfig == sum && o.generation == cv.Generation && o.member.uid == cv.UID {
		return o.member, nil
	}
	// Whoever may write the Secret chose its kubeconfig: no exec, no
	// file of the controller's, no proxy (kubeconfig.Untrusted).
	cfg, err := kubeconfig.Untrusted(data)
	if err != nil {
		return nil, fmt.Errorf("%w: Secret %s/%s key %s of cluster %s: %w", errKubeconfig, cv.Namespace, ref.Name, ref.Key, c.ID, err)
	}
	opts := m.runner
	log := m.log.WithValues("clusterversion", key.String(), "cluster", c.ID)
	opts.Notice = func(msg string) { log.Info(redact.Text(msg)) }
	opts.Observe = func(e engine.Event) { metrics.Observe(e) }
	sess, err := runner.Open(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: cluster %s: %w", errKubeconfig, c.ID, err)
	}
	mb := &member{key: key, uid: cv.UID, cluster: c, sess: sess, plan: memberPlan(cv, opts.Namespace, c.Version)}
	m.mu.Lock()
	m.opened[cacheKey] = openedMember{kubeconfig: sum, generation: cv.Generation, member: mb}
	m.mu.Unlock()
	return mb, nil
}

// start drives act on the member's run in a goroutine of its own, unless a
// drive of the cluster is live or its fleet is being deleted.
func (m *memberDrives) start(c *member, run, what string, act func(ctx context.Context) (*runner.Result, error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.drives[c.id()]; m.closed[c.uid] || d != nil && d.live() {
		return
	}
	ctx, cancel := context.WithCancel(m.base)
	d := &memberDrive{run: run, cancel: cancel, done: make(chan struct{})}
	m.drives[c.id()] = d
	log := m.log.WithValues("clusterversion", c.key.String(), "cluster", c.cluster.ID, "run", c.plan.Name)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		log.Info("member drive starts", "act", what)
		defer cancel()
		out, err := act(ctx)
		d.err, d.failed = driveEnd(out, err)
		if d.err != nil {
			log.Info("member drive stopped", "act", what, "error", redact.Text(d.err.Error()), "failed", d.failed)
		} else {
			log.Info("member drive ended", "act", what)
		}
		close(d.done)
		if ctx.Err() == nil { // not stopped: the fleet looks again
			m.wake(c.key)
		}
	}()
}

// driveEnd sorts how a drive ended, as the UpgradePlan controller does:
// what a person must fix fails the member operation; what may pass by
// itself (the member's API server away, its lease held, the controller
// stopping) is tried again.
func driveEnd(out *runner.Result, err error) (error, bool) {
	switch {
	case err == nil && (out == nil || out.Stopped == nil || errors.Is(out.Stopped, runner.ErrAborted)):
		return nil, false // the run's record says how it ended
	case err == nil:
		return out.Stopped, false
	case errors.Is(err, lease.ErrHeld):
		return fmt.Errorf("another process drives a run on the member cluster: %w", err), false
	case errors.Is(err, runner.ErrRefused) && out != nil && out.Decision.Next == engine.FinishRun:
		return fmt.Errorf("%w (%s)", err, out.Decision.Reason), true
	case errors.Is(err, runner.ErrRefused), errors.Is(err, errMemberPlan):
		return err, true
	}
	return err, false
}

// errMemberPlan marks a member plan its cluster rejects (sources, preflight).
var errMemberPlan = errors.New("member plan")

// upgrade starts, resumes or retries the member run: a run that failed is
// retried from its failed step, one rolled back starts over (its fleet's
// upshift.dev/retry asked for it); one that succeeded needs nothing.
func (m *memberDrives) upgrade(ctx context.Context, c *member, newCall bool) {
	run, err := c.sess.Store().Get(ctx, c.plan.Name)
	if err == nil && newCall && run.Status.Phase == v1alpha1.RunFailed {
		m.start(c, c.plan.Name, "retry", func(ctx context.Context) (*runner.Result, error) { return c.sess.Retry(ctx, c.plan.Name) })
		return
	}
	if err == nil && run.Status.Phase == v1alpha1.RunSucceeded {
		return
	}
	retry := err == nil && newCall && run.Status.Phase == v1alpha1.RunRolledBack
	m.start(c, c.plan.Name, "apply", func(ctx context.Context) (*runner.Result, error) {
		resolved, err := resolve.Read(ctx, &plan.Loaded{Plan: c.plan.DeepCopy(), AllowHTTP: c.sess.AllowHTTPSources()}, c.sess.Objects())
		if err != nil {
			return nil, fmt.Errorf("%w: read its sources on cluster %s: %w; nothing was changed", errMemberPlan, c.cluster.ID, err)
		}
		// A member run is keyed by its fleet (memberRunName names it on
		// every member), not by a namespace: the plan's namespace only
		// located its ConfigMap and Secret sources.
		resolved.Plan.Namespace = ""
		c.sess.ReadAhead(ctx, resolved)
		if errs := c.sess.Preflight(ctx, resolved); len(errs) > 0 {
			return nil, fmt.Errorf("%w: preflight on cluster %s: %s; nothing was changed", errMemberPlan, c.cluster.ID, problems(errs.ToAggregate().Errors()))
		}
		return c.sess.Apply(ctx, resolved, retry)
	})
}

// rollback rolls the member run back (a fleet's revert).
func (m *memberDrives) rollback(c *member, name string) {
	m.start(c, name, "rollback", func(ctx context.Context) (*runner.Result, error) { return c.sess.Rollback(ctx, name) })
}

// report says where a member operation is, from the member's run store
// and this process's drive; a run nobody drives is resumed.
func (m *memberDrives) report(ctx context.Context, cv *v1alpha1.ClusterVersion, clusterID string, op pluginsdk.Operation) pluginsdk.OperationReport {
	c, err := m.open(ctx, cv, clusterID)
	if err != nil {
		return unreachableMember(err)
	}
	name := fleet.MemberRunOf(op.ID)
	run, err := c.sess.Store().Get(ctx, name)
	if errors.Is(err, runstore.ErrNotFound) {
		run, err = nil, nil
	}
	m.mu.Lock()
	d := m.drives[c.id()]
	m.mu.Unlock()
	live := d != nil && d.live()
	switch {
	case err != nil && !live && op.Type == string(v1alpha1.ActionUpgradeMember):
		// No run store yet (its CRD comes with the first run), or the
		// member's API server away: the drive says which.
		m.upgrade(ctx, c, false)
		return running("the member cluster's runs cannot be read: " + err.Error())
	case err != nil:
		return running("the member cluster's runs cannot be read: " + err.Error())
	case op.Type == string(v1alpha1.ActionRollbackMember):
		return m.reportRollback(c, name, run, d, live)
	case run != nil && run.Status.Phase == v1alpha1.RunSucceeded:
		return pluginsdk.OperationReport{Status: pluginsdk.OperationDone, Message: "run " + name + " succeeded"}
	case run != nil && runEnded(run.Status.Phase) && !live:
		return failedRun(run)
	case !live && d != nil && d.failed:
		return failedReport(d.err.Error())
	case !live:
		m.upgrade(ctx, c, false)
		if d != nil && d.err != nil {
			return running(d.err.Error() + "; trying again")
		}
	}
	return runProgress(run)
}

func (m *memberDrives) reportRollback(c *member, name string, run *v1alpha1.UpgradeRun, d *memberDrive, live bool) pluginsdk.OperationReport {
	switch {
	case run == nil || run.Status.Phase == v1alpha1.RunRolledBack:
		return pluginsdk.OperationReport{Status: pluginsdk.OperationDone, Message: "run " + name + " rolled back"}
	case run.Status.Phase == v1alpha1.RunRollbackFailed && !live:
		return failedRun(run)
	case !live && d != nil && d.failed:
		return failedReport(d.err.Error())
	case !live:
		m.rollback(c, name)
	}
	return runProgress(run)
}

// wait returns when this process's drive of the cluster ends, or ctx
// does, or (no drive here) after a poll: never at once while the run
// goes on, or the fleet's waits would spin.
func (m *memberDrives) wait(ctx context.Context, cv *v1alpha1.ClusterVersion, clusterID string, op pluginsdk.Operation) pluginsdk.OperationReport {
	m.mu.Lock()
	d := m.drives[cv.Namespace+"/"+cv.Name+"/"+clusterID]
	closed := m.closed[cv.UID] // its drive ended for good: poll, not spin
	m.mu.Unlock()
	var done <-chan struct{}
	if d != nil && !closed {
		done = d.done
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(memberWaitPoll):
	}
	rctx, cancel := context.WithTimeout(m.base, 30*time.Second)
	defer cancel()
	return m.report(rctx, cv, clusterID, op)
}

// memberWaitPoll is how often a member run no drive of this process
// follows is looked at by a wait.
const memberWaitPoll = 5 * time.Second

func runEnded(p v1alpha1.RunPhase) bool {
	switch p {
	case v1alpha1.RunSucceeded, v1alpha1.RunFailed, v1alpha1.RunRolledBack, v1alpha1.RunRollbackFailed, v1alpha1.RunAborted:
		return true
	}
	return false
}

func running(msg string) pluginsdk.OperationReport {
	return pluginsdk.OperationReport{Status: pluginsdk.OperationRunning, Message: redact.Text(msg)}
}

func failedReport(msg string) pluginsdk.OperationReport {
	return pluginsdk.OperationReport{Status: pluginsdk.OperationFailed, Message: redact.Text(msg)}
}

// unreachableMember: a kubeconfig a person must fix fails the operation;
// anything else (the member's API server away) is waited out.
func unreachableMember(err error) pluginsdk.OperationReport {
	if errors.Is(err, errKubeconfig) {
		return failedReport(err.Error())
	}
	return running(err.Error())
}

// failedRun reports a run that ended without succeeding, with its
// failure.
func failedRun(run *v1alpha1.UpgradeRun) pluginsdk.OperationReport {
	why := run.Status.Failure
	if why == "" {
		why = run.Status.Message
	}
	return failedReport(fmt.Sprintf("run %s %s: %s", run.Name, run.Status.Phase, why))
}

// runProgress is a running run's report: "stage i of n: name".
func runProgress(run *v1alpha1.UpgradeRun) pluginsdk.OperationReport {
	if run == nil {
		return running("starting the run")
	}
	stage, _ := engine.Position(&run.Status)
	n := len(run.Status.Stages)
	for i, ss := range run.Status.Stages {
		if ss.Name == stage {
			return running(fmt.Sprintf("stage %d of %d: %s (%s)", i+1, n, stage, run.Status.Phase))
		}
	}
	return running(fmt.Sprintf("run %s", run.Status.Phase))
}
