package controller

import (
	"context"

	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/metrics"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/source"
)

// startDrive moves the plan's run in a goroutine of its own, as the CLI's
// apply, retry or rollback would, and wakes the plan's reconcile after
// every saved transition and when it ends.
func (r *Reconciler) startDrive(p *v1alpha1.UpgradePlan, act Act, run *v1alpha1.UpgradeRun) {
	key := client.ObjectKeyFromObject(p)
	ctx, cancel := context.WithCancel(r.base)
	d := &drive{act: act, generation: p.Generation, cancel: cancel, done: make(chan struct{}), run: run}
	if !r.drives.add(key, d) {
		cancel()
		return
	}
	p = p.DeepCopy()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(d.done)
		r.drive(ctx, d, p)
		r.drives.remove(key, d)
		cancel()
		r.wakeUp(p, true)
	}()
}

// drive runs one act to its end and records a start that could not begin.
func (r *Reconciler) drive(ctx context.Context, d *drive, p *v1alpha1.UpgradePlan) {
	key := client.ObjectKeyFromObject(p)
	log := r.log.WithValues("upgradeplan", key.String(), "act", d.act)
	var until time.Time // when a start waiting for a window is tried again
	block := func(reason, msg string) {
		msg = redact.Text(msg)
		log.Info("run blocked", "reason", reason, "message", msg)
		if r.drives.block(key, Blocked{Generation: p.Generation, At: time.Now(), Reason: reason, Message: msg, Until: until}) {
			r.recorder.Event(p, corev1.EventTypeWarning, reason, clip(msg))
		}
	}
	if why := r.self.refusal(v1alpha1.PlanKind, p.Namespace, p.Spec.ServiceAccountName, "spec.serviceAccountName"); why != "" {
		block(v1alpha1.ReasonInvalid, why)
		return
	}
	before := v1alpha1.RunPending
	if run := d.lastRun(); run != nil {
		before = phaseOf(run)
	}
	opts := r.runner
	opts.PlanConfig = planConfig(r.config, p)
	opts.Owner = planOwner(p)
	opts.Notice = func(msg string) { log.Info(redact.Text(msg)) }
	opts.Observe = func(e engine.Event) {
		r.drives.unblock(key) // the run moves: a start blocked before is past
		for _, n := range NotesFor(e, before) {
			r.recorder.Event(p, n.Type, n.Reason, n.Message)
		}
		before = phaseOf(e.Run)
		metrics.Observe(e)
		d.setRun(e.Run.DeepCopy())
		r.wakeUp(p, false)
	}
	sess, err := runner.Open(r.config, opts)
	if err != nil {
		block(v1alpha1.ReasonUnavailable, err.Error())
		return
	}
	out, started, err := r.act(ctx, d.act, sess, p, block)
	if !started {
		return
	}
	var window *runner.WindowWait
	switch {
	case ctx.Err() != nil:
		// Suspended, deleted or the controller stopping: the runner saved
		// the run as interrupted; the next drive resumes it.
	case errors.Is(err, lease.ErrHeld):
		block(v1alpha1.ReasonQueued, "another process drives a run on this cluster: "+err.Error())
	case errors.Is(err, runner.ErrChecksFailed):
		// A node may become Ready, a pod stop crashing: tried again.
		block(v1alpha1.ReasonPreflightFailed, err.Error())
	case errors.Is(err, runner.ErrRefused) && out != nil && out.Decision.Next == engine.FinishRun:
		block(v1alpha1.ReasonQueued, out.Decision.Reason)
	case errors.Is(err, runner.ErrRefused):
		block(v1alpha1.ReasonRefused, err.Error())
	case err != nil:
		block(v1alpha1.ReasonUnavailable, err.Error())
	case errors.As(out.Stopped, &window):
		// Outside the plan's windows: nothing of the stage began; the
		// start is tried again when the next window opens.
		d.setRun(out.Run)
		until = window.Next
		block(v1alpha1.ReasonWaitingForWindow, window.Error())
	case out.Stopped != nil && !errors.Is(out.Stopped, runner.ErrAborted) && !errors.Is(out.Stopped, runner.ErrInterrupted):
		// The API server went away or the lease was lost mid-run: the
		// run stays as last saved and is resumed after a backoff.
		d.setRun(out.Run)
		block(v1alpha1.ReasonUnavailable, out.Stopped.Error())
	default:
		r.drives.unblock(key)
		if out.Run != nil {
			d.setRun(out.Run)
		}
	}
}

// act starts the drive's act on the plan's run. started is false when it
// was blocked before (said with block): the plan refused, or its
// finalizer not written. The finalizer goes on just before the run is
// first written or moved, so a refused plan gets no write but its status.
func (r *Reconciler) act(ctx context.Context, act Act, sess *runner.Session, p *v1alpha1.UpgradePlan, block func(string, string)) (out *runner.Result, started bool, err error) {
	var resolved *resolve.Plan
	if act == Apply || act == ApplyRetry {
		var reason, msg string
		if resolved, reason, msg = r.resolve(ctx, sess, p); reason != "" {
			block(reason, msg)
			return nil, false, nil
		}
	}
	if err := holdDeletion(ctx, r.client, p); err != nil {
		block(v1alpha1.ReasonUnavailable, err.Error())
		return nil, false, nil
	}
	switch act {
	case Apply, ApplyRetry:
		out, err = sess.Apply(ctx, resolved, act == ApplyRetry)
	case RetryStep:
		out, err = sess.Retry(ctx, engine.RunOf(p))
	case Rollback:
		out, err = sess.Rollback(ctx, engine.RunOf(p))
	}
	return out, true, err
}

// resolve validates the plan for the cluster, reads its sources and runs
// the preflight as the plan's ServiceAccount. A problem comes back as a
// reason and a message naming the fields.
func (r *Reconciler) resolve(ctx context.Context, sess *runner.Session, p *v1alpha1.UpgradePlan) (*resolve.Plan, string, string) {
	cp := p.DeepCopy()
	cp.APIVersion, cp.Kind = v1alpha1.APIVersion, v1alpha1.PlanKind
	if errs := plan.ValidateInCluster(cp); len(errs) > 0 {
		return nil, v1alpha1.ReasonInvalid, problems(errs.ToAggregate().Errors())
	}
	resolved, err := resolve.Read(ctx, &plan.Loaded{Plan: cp, AllowHTTP: sess.AllowHTTPSources()}, sess.Objects())
	switch {
	case errors.Is(err, source.ErrPlainHTTP):
		// Trying again changes nothing: the plan or the flag must.
		return nil, v1alpha1.ReasonInvalid, err.Error() + "; nothing was changed"
	case errors.Is(err, source.ErrNotFound) || apierrors.IsForbidden(err):
		// A ConfigMap, a Secret or a RoleBinding may be added without
		// editing the plan: tried again, as a failed preflight is.
		return nil, v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: read the plan's sources: %s; nothing was changed", userOf(p), err)
	case err != nil:
		// A URL that does not answer now may later: tried again.
		return nil, v1alpha1.ReasonUnavailable, "read the plan's sources: " + err.Error()
	}
	sess.ReadAhead(ctx, resolved) // the first stage's snapshot, read beside preflight
	if errs := sess.Preflight(ctx, resolved); len(errs) > 0 {
		return nil, v1alpha1.ReasonPreflightFailed, fmt.Sprintf("as %s: %s; nothing was changed", userOf(p), problems(errs.ToAggregate().Errors()))
	}
	return resolved, "", ""
}

func problems(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}
