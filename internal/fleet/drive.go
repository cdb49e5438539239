package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plugin"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Inputs are what a step needs besides the spec and the status.
type Inputs struct {
	Generation int64
	// Approve and Retry: new action annotation values ("" when none).
	Approve, Retry string
	Now            func() time.Time
	// Statuses remembers every cluster's status between steps, so the
	// availability budget does not read the whole fleet for every
	// cluster it takes out. Nil: read it whenever needed.
	Statuses *StatusCache
	// Parallel bounds the plugin calls in flight (default 32).
	Parallel int
	// Watch, when set, knows about operations without asking the
	// plugin.
	Watch Watch
	// StatusBudget is how many bytes the status may take in the object
	// (MaxObjectBytes less the rest of it); 0: no limit. A step whose
	// calls could take the status past it makes none.
	StatusBudget int
	// Intend saves the status with the step's calls recorded as intents
	// (intent.go) before any is made; an error makes none. Nil: the
	// caller saves only after the calls (tests of pure logic).
	Intend func(ctx context.Context, st v1alpha1.ClusterVersionStatus) error
}

// Watch knows about operations in flight without asking the plugin: a
// driver that waits on them (WaitOperation) learns of their end as it
// happens, and asking about a hundred operations on every reconcile, when
// one of them ended, would cost a hundred calls for one answer.
type Watch interface {
	// Ended is the last report of the cluster's operation seen ending
	// (given once). A Watch is one fleet's: plugins number operations as
	// they like, so the fleet and the cluster name one with its id.
	Ended(cluster, op string) (pluginsdk.OperationReport, bool)
	// Quiet tells an operation waited on and asked about recently:
	// asking again brings nothing the wait would not.
	Quiet(cluster, op string, now time.Time) bool
}

// Result is a step's outcome: the status to save, the events to emit, the
// operations that ended (for the metrics) and when to look again.
type Result struct {
	Status       v1alpha1.ClusterVersionStatus
	Events       []Event
	Ended        []Ended
	RequeueAfter time.Duration
	// InFlight counts the operations in flight after the step.
	InFlight int
}

// maxRounds bounds the reads a step makes before it acts on what it has
// (Decide leaves alone the clusters it lacks news of).
const maxRounds = 4

// Step is one observe, decide, act, record pass: it asks about the
// operations in flight, reads what Decide needs, makes Decide's calls and
// records the operations they started. It returns ErrPluginDown (with
// the result so far, nothing lost) when the plugin cannot be reached.
func Step(ctx context.Context, p Plugin, sp Spec, st v1alpha1.ClusterVersionStatus, in Inputs) (Result, error) {
	if in.Parallel <= 0 {
		in.Parallel = 32
	}
	o := Observed{
		Now: in.Now(), Generation: in.Generation, Approve: in.Approve, Retry: in.Retry != "", RetryValue: in.Retry,
		Versions: map[string]pluginsdk.ClusterVersion{}, Statuses: map[string]pluginsdk.ClusterStatus{}, Ops: map[string]pluginsdk.OperationReport{},
		Answers: map[string]string{}, Lookups: map[string]Lookup{},
	}
	r := &reader{p: p, in: in, o: &o, caps: p.Capabilities(ctx)}
	for _, c := range sp.Clusters {
		r.ids = append(r.ids, c.ID)
	}
	if err := r.ops(ctx, st); err != nil {
		return unreachable(st, err, in), err
	}
	o.CanRevert = r.caps.Revert
	d, err := r.decide(ctx, sp, st)
	if err != nil {
		return unreachable(st, err, in), err
	}
	res := Result{Status: d.Status, Events: d.Events, Ended: d.Ended, RequeueAfter: d.RequeueAfter}
	if !d.Need.empty() {
		res.RequeueAfter = time.Millisecond // the rest next time, at once
	}
	pluginUp(&res.Status, o.Answers, o.Now)
	fit(&res.Status)
	if held, ev := tooLarge(&res.Status, st.Message, d.Calls, in.StatusBudget, metav1.NewTime(o.Now)); held {
		res.Events, d.Calls = append(res.Events, ev...), nil
		res.RequeueAfter = WaitPoll
	}
	if len(d.Calls) > 0 {
		before := *res.Status.DeepCopy()
		intend(&res.Status, d.Calls, o.Now)
		if in.Intend != nil {
			if err := in.Intend(ctx, res.Status); err != nil {
				res.Status = before // nothing was called
				return res, fmt.Errorf("save the intent of %d plugin calls (none made): %w", len(d.Calls), err)
			}
		}
	}
	err = act(ctx, p, in, d.Calls, &res)
	if err != nil {
		res.Events = append(res.Events, PluginDown(&res.Status, err, in.Now())...)
	}
	fit(&res.Status)
	for _, e := range res.Status.Clusters {
		if e.Operation != nil {
			res.InFlight++
		}
	}
	return res, err
}

// unreachable is the result of a step the plugin stopped: the status as it
// was, with the plugin's condition saying so.
func unreachable(st v1alpha1.ClusterVersionStatus, err error, in Inputs) Result {
	st = *st.DeepCopy()
	events := PluginDown(&st, err, in.Now())
	fit(&st)
	return Result{Status: st, Events: events, RequeueAfter: WaitPoll}
}

// reader reads from the plugin into an observation, in parallel.
type reader struct {
	p    Plugin
	caps Capabilities
	ids  []string
	in   Inputs
	o    *Observed
	mu   sync.Mutex
	// freshAll: every cluster's status was read from the plugin in
	// this step (none from the cache).
	freshAll bool
}

// decide decides, reading what each decision needs, up to maxRounds. A
// decision that takes a cluster out of service is made again on every
// cluster's status read from the plugin just now, not from the cache:
// requiredAvailableCount is a guarantee, and a cluster that stopped
// serving a second ago must hold the next one back.
func (r *reader) decide(ctx context.Context, sp Spec, st v1alpha1.ClusterVersionStatus) (Decision, error) {
	var d Decision
	for round := 0; ; round++ {
		r.o.Now = r.in.Now()
		d = Decide(sp, st, *r.o)
		if servicesOut(d.Calls) && !r.freshAll {
			if err := r.statusesNow(ctx); err != nil {
				return d, err
			}
			continue
		}
		if d.Need.empty() || round >= maxRounds {
			return d, nil
		}
		if err := r.read(ctx, d.Need); err != nil {
			return d, err
		}
	}
}

func servicesOut(calls []Call) bool {
	for _, c := range calls {
		if c.Action == v1alpha1.ActionServiceOut {
			return true
		}
	}
	return false
}

// ops asks about every operation in flight.
func (r *reader) ops(ctx context.Context, st v1alpha1.ClusterVersionStatus) error {
	g := r.group(ctx)
	for _, e := range st.Clusters {
		if e.Operation == nil {
			continue
		}
		if unconfirmed(e.Operation) {
			r.lookup(g, ctx, e.ID, e.Operation)
			continue
		}
		id, op := e.ID, pluginsdk.Operation{ID: e.Operation.ID, Type: e.Operation.Type}
		if w := r.in.Watch; w != nil {
			if rep, ok := w.Ended(id, op.ID); ok {
				r.mu.Lock()
				r.o.Ops[id] = rep
				r.mu.Unlock()
				continue
			}
			if w.Quiet(id, op.ID, r.in.Now()) {
				continue // no news: Decide leaves it as it is
			}
		}
		g.Go(func() error {
			rep, err := r.p.Report(ctx, id, op)
			if err != nil {
				return r.answer(id, "a question about operation "+op.ID, err)
			}
			r.mu.Lock()
			r.o.Ops[id] = rep
			r.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// read reads the versions and statuses a decision needs.
func (r *reader) read(ctx context.Context, n Need) error {
	g := r.group(ctx)
	for _, id := range n.Clusters {
		g.Go(func() error {
			v, err := r.p.GetVersion(ctx, id)
			if err != nil {
				return r.answer(id, "GetVersion", err)
			}
			s, err := r.p.GetClusterStatus(ctx, id)
			if err != nil {
				return r.answer(id, "GetClusterStatus", err)
			}
			r.mu.Lock()
			r.o.Versions[id], r.o.Statuses[id] = v, s
			r.mu.Unlock()
			r.in.Statuses.put(id, s, r.in.Now())
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if !n.AllStatuses {
		return nil
	}
	return r.allStatuses(ctx)
}

// allStatuses fills every cluster's status, from the cache where fresh.
func (r *reader) allStatuses(ctx context.Context) error {
	stale := r.in.Statuses.stale(r.ids, r.o, r.in.Now())
	if err := r.statuses(ctx, stale); err != nil {
		return err
	}
	r.o.AllStatuses = true
	r.freshAll = r.freshAll || len(stale) == len(r.ids)
	return nil
}

// statuses reads the clusters' statuses from the plugin, into the
// observation and the cache.
func (r *reader) statuses(ctx context.Context, ids []string) error {
	g := r.group(ctx)
	for _, id := range ids {
		g.Go(func() error {
			s, err := r.p.GetClusterStatus(ctx, id)
			if err != nil {
				return r.answer(id, "GetClusterStatus", err)
			}
			r.mu.Lock()
			r.o.Statuses[id] = s
			r.mu.Unlock()
			r.in.Statuses.put(id, s, r.in.Now())
			return nil
		})
	}
	return g.Wait()
}

func (r *reader) group(ctx context.Context) *errgroup.Group {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(r.in.Parallel)
	return g
}

// act makes the calls and records what they started. A refused call fails
// its cluster; a plugin that cannot be reached (or is too busy to answer)
// stops the step with what was started recorded.
func act(ctx context.Context, p Plugin, in Inputs, calls []Call, res *Result) error {
	type outcome struct {
		call Call
		op   pluginsdk.Operation
		err  error
	}
	outs := make([]outcome, len(calls))
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(in.Parallel)
	for i, c := range calls {
		g.Go(func() error {
			op, err := invoke(pluginsdk.WithRequestID(ctx, c.RequestID), p, c)
			outs[i] = outcome{c, op, err}
			return nil
		})
	}
	_ = g.Wait() // each outcome carries its error
	var downErr error
	for _, o := range outs {
		switch {
		case o.err == nil:
			Started(&res.Status, o.call, o.op, in.Now())
		case plugin.Classify(o.err) == plugin.Down:
			downErr = down(o.err)
		default:
			res.Events = append(res.Events, Refused(&res.Status, o.call, o.err))
			res.RequeueAfter = time.Millisecond
		}
	}
	return downErr
}

// invoke makes one call.
func invoke(ctx context.Context, p Plugin, c Call) (pluginsdk.Operation, error) {
	var op pluginsdk.Operation
	var err error
	switch c.Action {
	case v1alpha1.ActionServiceOut:
		op, err = p.ServiceOut(ctx, c.Cluster)
	case v1alpha1.ActionServiceIn:
		op, err = p.ServiceIn(ctx, c.Cluster)
	case v1alpha1.ActionUpgradeMaster:
		op, err = p.UpgradeMaster(ctx, c.Cluster, c.Version)
	case v1alpha1.ActionUpgradeNodePool:
		op, err = p.UpgradeNodePool(ctx, c.Cluster, c.NodePool, c.Version)
	case v1alpha1.ActionRevert:
		op, err = p.RevertCluster(ctx, c.Cluster, *c.To)
	case v1alpha1.ActionUpgradeMember, v1alpha1.ActionRollbackMember:
		op, err = invokeMember(ctx, p, c)
	}
	return op, err
}

// down passes ErrPluginDown on as it is, and marks an answer no cluster
// can avoid (plugin.PluginAnswer) as the plugin's being down too: the
// rollout waits where it is.
func down(err error) error {
	if errors.Is(err, ErrPluginDown) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrPluginDown, err)
}
