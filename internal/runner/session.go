package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/lease"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultNamespace keeps runs, backups and the lease.
const DefaultNamespace = "upshift-system"

// Sentinels for what stopped a drive before the run reached an end.
var (
	// ErrRefused: apply (or another command) would not start; nothing changed.
	ErrRefused = errors.New("refused")
	// ErrInterrupted: a signal stopped the process; the run resumes with apply.
	ErrInterrupted = errors.New("interrupted")
	// ErrAborted: an operator aborted the run.
	ErrAborted = errors.New("aborted")
	// ErrAbortedRun: Resume found the run aborted and no retry asked.
	ErrAbortedRun = errors.New("aborted by an operator")
	// ErrLeaseLost: another process may hold the run now.
	ErrLeaseLost = errors.New("lease lost")
)

// Options tune a Session. Zero values take the defaults.
type Options struct {
	Namespace     string
	LeaseDuration time.Duration // default 10s
	LeaseRenew    time.Duration // default 2s
	// KeepRuns is how many finished runs (and their backups) are kept.
	KeepRuns int // default 10
	// ReadyTimeout bounds the wait for restored workloads to be Ready.
	ReadyTimeout time.Duration // default 2m
	// Observe sees every saved transition (the CLI's live view).
	Observe func(engine.Event)
	// Notice reports what the session does besides transitions (waiting
	// for a lease, resuming, pruning).
	Notice func(msg string)
	// NoWait stops a run at an approval or a pause (exit 4) instead of
	// waiting; apply resumes it.
	NoWait bool
	// PlanConfig, when set, is who the plan acts as: its steps, gates,
	// the reads of its backups and its preflight (the controller
	// impersonates the plan's spec.serviceAccountName). The record, the
	// backups' Secrets and the lease are still written with Open's
	// config, the driver's own. Unset: the plan acts with Open's config.
	PlanConfig *rest.Config
	// Owner is the resource the session drives runs for (the controller's
	// UpgradePlan or PlatformUpgrade): a run it starts records it, and it
	// drives no run another owner started. Nil: the CLI's and the
	// wizard's runs, which no resource owns.
	Owner *v1alpha1.RunOwner
	// AllowHTTPSources is the driver's --allow-http-sources: every
	// plan's url sources and charts may be fetched over http://.
	AllowHTTPSources bool
	// Egress bounds the requests the plan's gates and metrics make: the
	// controller's --gate-hosts. Link-local addresses are refused always.
	Egress egress.Policy
	// Now is the clock the plan's windows are read with (default
	// time.Now); tests move it.
	Now func() time.Time
}

// now is the session's clock.
func (s *Session) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// AllowHTTPSources is Options.AllowHTTPSources.
func (s *Session) AllowHTTPSources() bool { return s.opts.AllowHTTPSources }

// Owner is the resource this session drives runs for (Options.Owner).
func (s *Session) Owner() *v1alpha1.RunOwner { return s.opts.Owner }

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 10 * time.Second
	}
	if o.LeaseRenew == 0 {
		o.LeaseRenew = 2 * time.Second
	}
	if o.KeepRuns == 0 {
		o.KeepRuns = 10
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultGateTimeout
	}
	if o.Notice == nil {
		o.Notice = func(string) {}
	}
}

// Session drives runs on one cluster.
type Session struct {
	opts Options
	cs   kubernetes.Interface // the driver's: record, lease
	// planCS is who the plan acts as (Options.PlanConfig); cs when unset.
	planCS  kubernetes.Interface
	store   *runstore.Store
	backups *backup.Client
	deps    *clients.Set
	// preLease is the read-ahead ReadAhead began for the next Apply.
	preLease *preLeaseRead
	// fence passes the writes of deps and backups only while this
	// session holds the lease. The store and the lease itself write
	// without it: the store saves with the lease's context, and approve
	// and abort write the record without the lease by design.
	fence *lease.Fence
}

// Open connects to the cluster.
func Open(cfg *rest.Config, opts Options) (*Session, error) {
	opts.defaults()
	cfg = withStepWriteFailpoint(cfg, opts.Namespace)
	planCfg := cfg
	if opts.PlanConfig != nil {
		planCfg = withStepWriteFailpoint(opts.PlanConfig, opts.Namespace)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	planCS := cs
	if opts.PlanConfig != nil {
		if planCS, err = kubernetes.NewForConfig(planCfg); err != nil {
			return nil, err
		}
	}
	fence := lease.NewFence()
	deps, err := clients.New(fence.Guard(planCfg))
	if err != nil {
		return nil, err
	}
	deps.Egress = opts.Egress
	b, err := backup.NewSplit(fence.Guard(cfg), fence.Guard(planCfg), opts.Namespace, deps.Mapper)
	if err != nil {
		return nil, err
	}
	b.AfterChunkWritten = backupFailpoint()
	store, err := runstore.New(cfg, opts.Namespace)
	if err != nil {
		return nil, err
	}
	return &Session{opts: opts, cs: cs, planCS: planCS, store: store, backups: b, deps: deps, fence: fence}, nil
}

// ready readies the cluster for a run's first write: the UpgradeRun CRD
// installed and current (said through Notice when it had to be
// installed; a user who may not install it is refused with the fix
// before anything changed), then the runs namespace.
func (s *Session) ready(ctx context.Context) error {
	msg, err := s.store.EnsureCRD(ctx)
	if err != nil {
		return err
	}
	if msg != "" {
		s.opts.Notice(msg)
	}
	if err := s.store.EnsureNamespace(ctx); err != nil {
		return err
	}
	s.backups.NamespaceReady() // the runs' namespace is the backups' too
	return nil
}

// Store gives read access to saved runs (status, history).
func (s *Session) Store() *runstore.Store { return s.store }

// Backups gives access to backups (backup list, show).
func (s *Session) Backups() *backup.Client { return s.backups }

// Result is where a command left a run.
type Result struct {
	Run      *v1alpha1.UpgradeRun
	Decision engine.Decision
	// Stopped is set when the drive stopped before an end: ErrInterrupted,
	// ErrAborted or ErrLeaseLost.
	Stopped error
	// runs is how many runs the cluster held once apply decided, this
	// one included; 0 when they were not counted. Under the lease since,
	// no other run was made: prune need not list them again to know
	// there are too few to prune.
	runs int
}

// acquire takes the cluster's lease for the run. seenFree: the lease was
// just seen released, so no holder is looked up for a notice.
func (s *Session) acquire(ctx context.Context, run string, seenFree bool) (*lease.Held, error) {
	cfg := lease.Config{Namespace: s.opts.Namespace, Duration: s.opts.LeaseDuration, RenewEvery: s.opts.LeaseRenew, Identity: lease.CurrentIdentity(run)}
	// Seen released a moment ago, the lease is looked up no more: whoever
	// took it since holds it for a run of their own, and Acquire's
	// refusal names them.
	if !seenFree {
		if id, valid, err := lease.Holder(ctx, s.cs, s.opts.Namespace, lease.DefaultName); err == nil && valid && id.PID != 0 {
			s.opts.Notice(fmt.Sprintf("lease held by %s; waiting up to %s for it", id, s.opts.LeaseDuration))
		}
	}
	h, err := lease.Acquire(ctx, s.cs, cfg)
	if err != nil {
		if errors.Is(err, lease.ErrHeld) {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return nil, fmt.Errorf("take the lease: %w", err)
	}
	s.fence.Open(h)
	return h, nil
}

// Apply runs or resumes the plan, as engine.DecideApply rules.
func (s *Session) Apply(ctx context.Context, p *resolve.Plan, retry bool) (*Result, error) {
	return s.apply(ctx, p, applyMode{retry: retry})
}

func (s *Session) apply(ctx context.Context, p *resolve.Plan, mode applyMode) (*Result, error) {
	pre := s.takePreLease(ctx)
	defer pre.drop() // unless claimed below
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	held, err := s.acquire(ctx, p.RunName(), pre.leaseFree())
	if err != nil {
		return nil, err
	}
	defer held.Release()

	ahead := pre.claim(p, held)
	defer func() { ahead.drop() }()
	// The first stage's snapshot must be as new as the stage's start,
	// which comes after the plan's health checks (up to 30 s each): the
	// read begun before the lease is confirmed, or the snapshot read, once they passed,
	// beside prepare's writes that follow them.
	checks := func(ctx context.Context) ([]v1alpha1.StepStatus, error) {
		st, err := s.checks(ctx, p)
		if err != nil {
			return st, err
		}
		if ahead != nil {
			ahead.confirm(held.Context(), s.backups)
		} else {
			ahead = s.startReadAhead(held.Context(), p)
		}
		return st, nil
	}
	out, drive, err := prepare(held.Context(), s.store, p, s.opts.Owner, mode, s.opts.Notice, checks)
	if err != nil || !drive {
		return out, err
	}
	if out.Decision.Verdict != engine.StartRun {
		ahead.drop()
	}
	fresh := out.Decision.Verdict == engine.StartRun || out.Decision.Verdict == engine.StartAttempt
	return s.drive(ctx, held, out, p, ahead, fresh)
}

// newActor builds the actor that does a drive's IO with deps.
func (s *Session) newActor(p *resolve.Plan, deps *clients.Set) *actor {
	a := &actor{store: s.store, poll: s.opts.LeaseRenew, noWait: s.opts.NoWait,
		plan: p, deps: deps, readyTimeout: s.opts.ReadyTimeout, runs: s.runs()}
	a.backups = &stageBackups{client: s.backups, objects: a}
	return a
}

// drive moves the run with the engine until it ends or stops. ahead, if
// not nil, is the first stage's snapshot read ahead for a new run
// (readAhead). reconciled: the run has no backup to look for (it was just
// created or started a new attempt) or was reconciled (Session.reconcile).
func (s *Session) drive(ctx context.Context, held *lease.Held, out *Result, p *resolve.Plan, ahead *readAhead, reconciled bool) (*Result, error) {
	run := out.Run
	actCtx, cancel := context.WithCancelCause(held.Context())
	defer cancel(nil)
	stopOnSignal := context.AfterFunc(ctx, func() { cancel(ErrInterrupted) })
	defer stopOnSignal()
	go s.watchAbort(actCtx, run.Name, func() { cancel(ErrAborted) })

	// The run's waits share one informer cache, stopped with the run.
	deps, closeCache := s.deps.WithCache()
	defer closeCache()
	a := s.newActor(p, deps)
	a.backups.first = ahead
	saver := newSaver(s.store, held.Context(), run, func() { cancel(ErrAborted) })
	saver.beforeEnd = a.finish
	if out.Decision.Verdict == engine.StartRun {
		// Created without its status (runstore.Store.Create): what is
		// stored holds no transition yet, and an abort requested before
		// the first save is not another process moving the run on.
		saver.last = 0
	}
	drv := &engine.Driver{
		Actor:   a,
		Saver:   saver,
		Now:     time.Now,
		Observe: s.opts.Observe,
		Hold:    s.windowHold(actCtx, p.Plan.Spec),
	}
	// After newSaver: the reconcile is a transition of this process's,
	// not a save of another's the saver would take for a lost lease. The
	// action it lets start (the stage's step, or its restore) saves it.
	var err error
	if !reconciled {
		err = s.reconcile(actCtx, run)
	}
	if err == nil {
		err = a.reinstate(actCtx, run, s.opts.Notice)
	}
	if err == nil {
		err = drv.Drive(actCtx, run)
	}
	if err == nil {
		if out.runs == 0 || out.runs > s.opts.KeepRuns {
			s.prune(held.Context(), run.Name)
		}
		return out, nil
	}
	cause := context.Cause(actCtx)
	switch {
	case errors.Is(cause, ErrAborted):
		// `upshift abort` wrote the request into the record: save the
		// abort on top of it (the saver takes the flag on a conflict).
		out.Stopped = ErrAborted
		if aerr := engine.Abort(run, "an operator", time.Now()); aerr == nil {
			if serr := saver.Save(held.Context(), run); serr != nil {
				out.Stopped = &NotSavedError{Stop: ErrAborted, Err: serr}
			}
		}
	case errors.Is(cause, ErrInterrupted):
		run.Status.Message = "interrupted"
		out.Stopped = ErrInterrupted
		if serr := saver.Save(held.Context(), run); serr != nil {
			out.Stopped = &NotSavedError{Stop: ErrInterrupted, Err: serr}
		}
	case held.Context().Err() != nil:
		out.Stopped = ErrLeaseLost
	default:
		// The API server unavailable, or progress that could not be
		// saved: the run stays as last saved, for apply to resume.
		out.Stopped = err
	}
	return out, nil
}

// runs is the runs namespace and the driver's client, which freeze steps
// leave alone and probe with.
func (s *Session) runs() step.Runs {
	return step.Runs{Namespace: s.opts.Namespace, Client: s.cs}
}

// Clientset is the session's typed client (status reads the lease).
func (s *Session) Clientset() kubernetes.Interface { return s.cs }

// NotSavedError: the run stopped (Stop: ErrInterrupted or ErrAborted) but
// recording where it stopped failed. The record holds the last transition
// saved before; the caller must not say "saved".
type NotSavedError struct {
	Stop error
	Err  error
}

func (e *NotSavedError) Error() string {
	return fmt.Sprintf("%v, and saving that failed: %v", e.Stop, e.Err)
}

// Unwrap gives the save's error only: a run whose stop was not recorded
// is not a resumable stop (errors.Is(err, ErrInterrupted) is false), so
// drivers report it as needing an operator.
func (e *NotSavedError) Unwrap() error { return e.Err }

// ErrWaiting: the run waits for an approval or a pause and the caller
// asked not to wait (apply --no-wait). apply resumes it later.
var ErrWaiting = step.ErrWaiting
