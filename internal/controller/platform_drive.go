package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/catalog"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/upgrade"
	"github.com/upshift-dev/upshift/internal/versions"
)

// Event reasons of a PlatformUpgrade.
const (
	ReasonHopStarted    = "HopStarted"
	ReasonHopSucceeded  = "HopSucceeded"
	ReasonHopStopped    = "HopStopped"
	ReasonUpgradeDone   = "UpgradeSucceeded"
	ReasonUpgradeFailed = "UpgradeFailed"
)

// startDrive drives the upgrade's hops in a goroutine of its own; retry
// gives the failed hop a new attempt.
func (r *PlatformReconciler) startDrive(pu *v1alpha1.PlatformUpgrade, retry bool) {
	key := client.ObjectKeyFromObject(pu)
	ctx, cancel := context.WithCancel(r.base)
	d := &platformDrive{cancel: cancel, done: make(chan struct{}),
		progress: PlatformProgress{Generation: pu.Generation, Phase: v1alpha1.PlatformRunning, Message: "finding where the cluster is"}}
	if !r.drives.start(key, d) {
		cancel()
		return
	}
	pu = pu.DeepCopy()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(d.done)
		r.drive(ctx, d, pu, retry)
		d.mu.Lock()
		d.ended = true
		d.mu.Unlock()
		cancel()
		r.wakeUp(pu, true)
	}()
}

// drive runs the hops to the target, or to where one stops, and records
// how it ended (or why it could not start, to be tried again).
func (r *PlatformReconciler) drive(ctx context.Context, d *platformDrive, pu *v1alpha1.PlatformUpgrade, retry bool) {
	key := client.ObjectKeyFromObject(pu)
	log := r.log.WithValues("platformupgrade", key.String())
	who := serviceAccountUser(pu.Namespace, pu.Spec.ServiceAccountName)
	end, blockUntil := r.reporting(d, pu, log)
	block := func(reason, msg string) { blockUntil(time.Time{}, reason, msg) }
	if why := r.self.refusal(v1alpha1.PlatformUpgradeKind, pu.Namespace, pu.Spec.ServiceAccountName, "spec.serviceAccountName"); why != "" {
		block(v1alpha1.ReasonInvalid, why)
		return
	}
	target, err := semver.NewVersion(pu.Spec.TargetVersion)
	if err != nil {
		block(v1alpha1.ReasonInvalid, fmt.Sprintf("spec.targetVersion %q is not a semantic version: write it as 1.2.3 or v1.2.3", pu.Spec.TargetVersion))
		return
	}
	cfg := impersonating(r.config, who) // as a plan's ServiceAccount
	cs, err := clients.New(cfg)
	if err != nil {
		block(v1alpha1.ReasonUnavailable, err.Error())
		return
	}
	objs, err := resolve.NewObjects(cfg)
	if err != nil {
		block(v1alpha1.ReasonUnavailable, err.Error())
		return
	}
	cat, ok := openCatalog(ctx, pu, objs, who, block)
	if !ok {
		return
	}
	sess, err := runner.Open(r.config, r.hopOptions(d, pu, cfg, log))
	if err != nil {
		block(v1alpha1.ReasonUnavailable, err.Error())
		return
	}
	hops := &upgrade.Hops{
		Session: sess, Clients: cs, Catalog: cat, Retry: retry,
		Request: upgrade.Request{Target: target, AllowDowngrade: pu.Spec.AllowDowngrade},
		Resolve: resolveHopPlan(pu, sess, objs),
		Notice:  func(msg string) { log.Info(redact.Text(msg)) },
		Solved:  r.solved(d, pu),
		HopDone: r.hopDone(d, pu),
	}
	if err := holdDeletion(ctx, r.client, pu); err != nil { // before any hop is written
		block(v1alpha1.ReasonUnavailable, err.Error())
		return
	}
	res, err := hops.Run(ctx)
	if ctx.Err() != nil {
		return // suspended, deleted or stopping: the hop was saved as interrupted
	}
	if err != nil {
		r.failed(err, who, block, end)
		return
	}
	if out := res.Stopped; out != nil {
		r.stopped(out, blockUntil, end)
		return
	}
	r.drives.blocked.unblock(key)
	end(v1alpha1.PlatformSucceeded, ReasonUpgradeDone, fmt.Sprintf("the platform runs %s", target))
}

// reporting is how a drive records its end (end), or why it could not
// go on and when to try again (blockUntil; zero: after the backoff).
func (r *PlatformReconciler) reporting(d *platformDrive, pu *v1alpha1.PlatformUpgrade, log logr.Logger) (
	end func(v1alpha1.PlatformPhase, string, string), blockUntil func(time.Time, string, string)) {
	key := client.ObjectKeyFromObject(pu)
	end = func(phase v1alpha1.PlatformPhase, reason, msg string) {
		msg = redact.Text(msg)
		d.update(func(p *PlatformProgress) { p.Phase, p.Message = phase, msg })
		typ := corev1.EventTypeNormal
		if phase != v1alpha1.PlatformSucceeded {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Event(pu, typ, reason, clip(msg))
	}
	blockUntil = func(until time.Time, reason, msg string) {
		msg = redact.Text(msg)
		log.Info("upgrade blocked", "reason", reason, "message", msg)
		d.update(func(p *PlatformProgress) { p.Phase, p.Message = v1alpha1.PlatformBlocked, msg })
		if r.drives.blocked.block(key, Blocked{Generation: pu.Generation, At: time.Now(), Reason: reason, Message: msg, Until: until}) {
			r.recorder.Event(pu, corev1.EventTypeWarning, reason, clip(msg))
		}
	}
	return end, blockUntil
}

// openCatalog opens the upgrade's catalog with its values, as the
// upgrade's ServiceAccount; when it cannot, it blocks the upgrade and
// says why.
func openCatalog(ctx context.Context, pu *v1alpha1.PlatformUpgrade, objs source.Objects, who string, block func(string, string)) (*catalog.Catalog, bool) {
	ref := catalog.Ref{URL: pu.Spec.Catalog.URL}
	if cm := pu.Spec.Catalog.ConfigMap; cm != nil {
		ref = catalog.Ref{ConfigMap: cm.Name, Namespace: pu.Namespace}
	}
	cat, err := catalog.Open(ctx, ref, catalog.Options{Objects: objs})
	if err != nil {
		var invalid *catalog.InvalidError
		var decode *plan.DecodeError
		if errors.As(err, &invalid) || errors.As(err, &decode) {
			block(v1alpha1.ReasonInvalid, "spec.catalog: "+err.Error())
		} else {
			// A ConfigMap or a RoleBinding may be added, a URL may answer
			// later: tried again.
			block(v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: spec.catalog: %v", who, err))
		}
		return nil, false
	}
	if err := cat.SetValues(pu.Spec.Values); err != nil {
		block(v1alpha1.ReasonInvalid, "spec.values: "+err.Error())
		return nil, false
	}
	return cat, true
}

// hopOptions are the runner's options for the upgrade's hops: its plans
// act as cfg, its runs are owned by the upgrade, and each saved run
// becomes the hop's status, events and metrics.
func (r *PlatformReconciler) hopOptions(d *platformDrive, pu *v1alpha1.PlatformUpgrade, cfg *rest.Config, log logr.Logger) runner.Options {
	opts := r.runner
	opts.PlanConfig = cfg
	opts.Owner = &v1alpha1.RunOwner{Kind: v1alpha1.PlatformUpgradeKind, Namespace: pu.Namespace, Name: pu.Name, UID: pu.UID}
	opts.Notice = func(msg string) { log.Info(redact.Text(msg)) }
	before := v1alpha1.RunPending
	opts.Observe = func(e engine.Event) {
		for _, n := range NotesFor(e, before) {
			r.recorder.Event(pu, n.Type, n.Reason, n.Message)
		}
		before = phaseOf(e.Run)
		metrics.Observe(e)
		d.setHop(hopStatus(e.Run, ""))
		r.wakeUp(pu, false)
	}
	return opts
}

// resolveHopPlan resolves a hop's plan for the upgrade: its
// spec.autoRollback, when off, turns the plan's off too, and its
// spec.windows replace the plan's.
func resolveHopPlan(pu *v1alpha1.PlatformUpgrade, sess *runner.Session, objs source.Objects) func(context.Context, string, *plan.Loaded) (*resolve.Plan, error) {
	autoRollback := pu.Spec.AutoRollback
	return func(ctx context.Context, name string, l *plan.Loaded) (*resolve.Plan, error) {
		if autoRollback != nil && !*autoRollback {
			off := false
			l.Plan.Spec.AutoRollback = &off
		}
		if len(pu.Spec.Windows) > 0 {
			l.Plan.Spec.Windows = pu.Spec.Windows
		}
		l.Plan.Namespace = pu.Namespace // its ConfigMap and Secret sources are the upgrade's
		l.AllowHTTP = sess.AllowHTTPSources()
		return resolve.Read(ctx, l, objs)
	}
}

// solved records the path the hops take, as the drive's progress.
func (r *PlatformReconciler) solved(d *platformDrive, pu *v1alpha1.PlatformUpgrade) func(*upgrade.Solution) {
	return func(s *upgrade.Solution) {
		path := make([]string, len(s.Path))
		for i, rel := range s.Path {
			path[i] = rel.Version.String()
		}
		d.mu.Lock()
		d.solvedFrom = upgrade.VersionString(s.From)
		d.mu.Unlock()
		d.update(func(p *PlatformProgress) {
			p.Path, p.Current, p.SolvedFrom = path, upgrade.VersionString(s.From), upgrade.VersionString(s.From)
			if p.Previous == "" {
				p.Previous = p.Current
			}
			p.Message = fmt.Sprintf("from %s to %s in %d hop(s)", upgrade.VersionString(s.From), s.To, len(s.Path))
		})
		if len(s.UncheckedPeers) > 0 {
			r.recorder.Eventf(pu, corev1.EventTypeWarning, "PeersNotChecked", "peers not checked, no kubeconfig Secret (spec.peers.expected.missing: Warn): %s", strings.Join(s.UncheckedPeers, ", "))
		}
		r.wakeUp(pu, false)
	}
}

// hopDone records where a hop ended, with an event when it succeeded.
func (r *PlatformReconciler) hopDone(d *platformDrive, pu *v1alpha1.PlatformUpgrade) func(upgrade.Hop) {
	return func(h upgrade.Hop) {
		d.setHop(hopStatus(h.Run, h.From))
		if h.Run != nil && h.Run.Status.Phase == v1alpha1.RunSucceeded {
			d.update(func(p *PlatformProgress) { p.Current = h.To })
			r.recorder.Event(pu, corev1.EventTypeNormal, ReasonHopSucceeded, clip(fmt.Sprintf("hop to %s succeeded (run %s)", h.To, h.Run.Name)))
		}
		r.wakeUp(pu, false)
	}
}

// failed sorts an error of the hops: what may change by itself is tried
// again; what a person must fix stops the upgrade.
func (r *PlatformReconciler) failed(err error, who string, block func(string, string), end func(v1alpha1.PlatformPhase, string, string)) {
	var refused *upgrade.RefusedError
	var preflight *upgrade.PreflightError
	var removed *upgrade.RemovedAPIsError
	var verify *upgrade.VerifyError
	var aborted *upgrade.AbortedError
	var noPath *versions.NoPathError
	var invalid *catalog.InvalidError
	switch {
	case errors.Is(err, lease.ErrHeld):
		block(v1alpha1.ReasonQueued, "another process drives a run on this cluster: "+err.Error())
	case errors.As(err, &refused) && refused.Result != nil && refused.Result.Decision.Next == engine.FinishRun:
		block(v1alpha1.ReasonQueued, refused.Result.Decision.Reason)
	case errors.Is(err, runner.ErrChecksFailed):
		block(v1alpha1.ReasonPreflightFailed, err.Error())
	case errors.As(err, &refused) && errors.Is(err, runner.ErrRefused):
		block(v1alpha1.ReasonRefused, err.Error())
	case errors.As(err, &preflight):
		block(v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: %s: %s; nothing was changed", who, preflight.Name, problems(preflight.Errs.ToAggregate().Errors())))
	case errors.As(err, &removed):
		block(v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: %s: %s; nothing was changed", who, removed.Error(), strings.Join(removed.Report.Lines(), "; ")))
	case errors.As(err, &verify):
		end(v1alpha1.PlatformFailed, ReasonUpgradeFailed, err.Error())
	case errors.As(err, &aborted):
		// Failed, not blocked: upshift.dev/retry resumes it.
		end(v1alpha1.PlatformFailed, ReasonHopStopped, err.Error())
	case errors.As(err, &invalid):
		block(v1alpha1.ReasonInvalid, err.Error())
	case errors.As(err, &noPath), errors.Is(err, upgrade.ErrNoDetect):
		// Peers move, a cluster is upgraded: a path may open later.
		block(v1alpha1.ReasonPreflightFailed, err.Error()+"; nothing was changed")
	default:
		// Detection, peers or the matrix could not be read, or the API
		// server is away: tried again.
		block(v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: %v; nothing was changed", who, err))
	}
}

// stopped records a hop that did not succeed.
func (r *PlatformReconciler) stopped(out *runner.Result, blockUntil func(time.Time, string, string), end func(v1alpha1.PlatformPhase, string, string)) {
	run := out.Run
	block := func(reason, msg string) { blockUntil(time.Time{}, reason, msg) }
	var window *runner.WindowWait
	switch {
	case errors.As(out.Stopped, &window):
		// Nothing of the hop's stage began: tried again when the next
		// window opens.
		blockUntil(window.Next, v1alpha1.ReasonWaitingForWindow, window.Error())
	case out.Stopped != nil && !errors.Is(out.Stopped, runner.ErrAborted) && !errors.Is(out.Stopped, runner.ErrInterrupted):
		// The API server went away or the lease was lost: the hop stays
		// as saved and is resumed after a backoff.
		block(v1alpha1.ReasonUnavailable, out.Stopped.Error())
	case run != nil && run.Status.Phase == v1alpha1.RunRolledBack:
		end(v1alpha1.PlatformRolledBack, ReasonHopStopped, fmt.Sprintf("hop to %s failed and was rolled back (run %s): %s; the hops before it stay done", run.Spec.Plan.Version, run.Name, run.Status.Failure))
	case run != nil:
		end(v1alpha1.PlatformFailed, ReasonHopStopped, fmt.Sprintf("hop to %s stopped %s (run %s): %s; an operator must act on the run (upshift status %s)", run.Spec.Plan.Version, run.Status.Phase, run.Name, run.Status.Message, run.Name))
	default:
		end(v1alpha1.PlatformFailed, ReasonHopStopped, "a hop stopped: "+out.Decision.Reason)
	}
}

// hopStatus is a hop's entry in the status, from its run.
func hopStatus(run *v1alpha1.UpgradeRun, from string) v1alpha1.HopStatus {
	h := v1alpha1.HopStatus{From: from, To: run.Spec.Plan.Version, Run: run.Name, Phase: phaseOf(run)}
	if t := run.Status.StartedAt; t != nil {
		h.StartedAt = &metav1.Time{Time: t.Time}
	}
	if t := run.Status.FinishedAt; t != nil {
		h.FinishedAt = &metav1.Time{Time: t.Time}
	}
	return h
}
