package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runstore"
)

// A ClusterVersion holds the finalizer v1alpha1.FinalizerRun as plans do
// (finalizer.go): deleted mid-rollout without it, its member runs drove
// on (or stopped when the controller did) with their freezes and leases
// in force on the members, and nothing said which plugin operations it
// left running.

// ReasonDeleted: a deleted fleet let go, saying what it left in flight.
const ReasonDeleted = "Deleted"

// hold adds the finalizer before the fleet's first step, so before any
// call that starts a plugin operation or a member run: a fleet refused
// before (its spec, its ServiceAccount, its plugin out of reach) gets
// none. It reads the fleet from the API server: the cache lags the
// status writes, and each would fail the conditional patch.
func (r *FleetReconciler) hold(ctx context.Context, cv *v1alpha1.ClusterVersion) error {
	if controllerutil.ContainsFinalizer(cv, v1alpha1.FinalizerRun) {
		return nil
	}
	err := holdDeletionFrom(ctx, r.reader, r.client, cv)
	if err == nil {
		return nil
	}
	msg := err.Error() + ": nothing starts until it is added"
	if apierrors.IsForbidden(err) {
		msg += "; grant the controller patch on clusterversions (config/rbac/role.yaml)"
	}
	r.recorder.Event(cv, corev1.EventTypeWarning, ReasonActionRefused, clip(redact.Text(msg)))
	return err
}

// release lets a deleted fleet go once nothing of it is left in force:
// no operation or member run of it starts any more, its member runs are
// stopped where they are (stopFleet), what was decided is saved, and an
// event names the plugin operations still in flight, which the plugin
// goes on with (an operation cannot be cancelled). What fails keeps the
// finalizer, is said in an event and is tried again.
func (r *FleetReconciler) release(ctx context.Context, cv *v1alpha1.ClusterVersion, fs *fleetStatus) (ctrl.Result, error) {
	st := fs.current()
	stopped, err := r.members.stopFleet(ctx, cv, st)
	if err == nil {
		err = r.writer.saveNow(ctx, fs)
	}
	if err != nil {
		r.recorder.Event(cv, corev1.EventTypeWarning, ReasonActionRefused,
			clip(redact.Text("deleting: "+err.Error()+"; the finalizer stays, tried again in 5s")))
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	key := client.ObjectKeyFromObject(cv)
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur := &v1alpha1.ClusterVersion{}
		if err := r.reader.Get(ctx, key, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		return letGo(ctx, r.client, cur)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	kind, msg := released(stopped, st)
	r.recorder.Event(cv, kind, ReasonDeleted, clip(redact.Text(msg)))
	r.forget(key)
	return ctrl.Result{}, nil
}

// released says what a deleted fleet left: the member runs stopped, the
// plugin operations in flight (Warning: they go on, unwatched).
func released(stopped []string, st v1alpha1.ClusterVersionStatus) (string, string) {
	var ops []string
	for _, e := range st.Clusters {
		if op := e.Operation; op != nil && !isMemberAction(op.Action) {
			ref := "operation " + op.ID
			if op.ID == "" { // its answer was lost: only the request is known
				ref = "request " + op.RequestID + ", its answer not recorded"
			}
			ops = append(ops, fmt.Sprintf("cluster %s %s (%s)", e.ID, op.Action, ref))
		}
	}
	msg := "ClusterVersion deleted"
	if len(stopped) > 0 {
		msg += "; member runs stopped where they were (aborted, their freezes lifted, their records kept on the members): " + strings.Join(stopped, ", ")
	}
	if len(ops) == 0 {
		return corev1.EventTypeNormal, msg + "; no plugin operation was in flight"
	}
	return corev1.EventTypeWarning, msg + "; plugin operations still in flight, which the plugin goes on with (an operation cannot be cancelled): " + strings.Join(ops, ", ")
}

func isMemberAction(a v1alpha1.FleetAction) bool {
	return a == v1alpha1.ActionUpgradeMember || a == v1alpha1.ActionRollbackMember
}

// stopFleet stops a deleted fleet's member runs where they are: no drive
// of the fleet starts again; its drives in this process are cancelled
// (each run saved as interrupted, its lease given back); then each run
// they drove, or the status has in flight, that still moves is aborted on
// its member, which lifts its freezes. The records stay. It names the
// runs it aborted.
func (m *memberDrives) stopFleet(ctx context.Context, cv *v1alpha1.ClusterVersion, st v1alpha1.ClusterVersionStatus) ([]string, error) {
	key := types.NamespacedName{Namespace: cv.Namespace, Name: cv.Name}
	runs := map[string]string{} // by cluster
	for _, e := range st.Clusters {
		if op := e.Operation; op != nil && isMemberAction(op.Action) {
			runs[e.ID] = fleet.MemberRunOf(op.ID)
		}
	}
	m.mu.Lock()
	m.closed[cv.UID] = true
	m.mu.Unlock()
	for cluster, d := range m.stopDrives(key) {
		runs[cluster] = d.run
	}
	var (
		mu      sync.Mutex
		stopped []string
		errs    []string
		wg      sync.WaitGroup
		limit   = make(chan struct{}, 8)
	)
	for cluster, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			aborted, err := m.abort(ctx, cv, cluster, run)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
			} else if aborted {
				stopped = append(stopped, fmt.Sprintf("%s (run %s)", cluster, run))
			}
		}()
	}
	wg.Wait()
	slices.Sort(stopped)
	if len(errs) > 0 {
		slices.Sort(errs)
		return stopped, errors.New(strings.Join(errs, "; "))
	}
	return stopped, nil
}

// stopDrives cancels the fleet's drives in this process and waits until
// each has saved where it stopped; it gives every drive the fleet had
// here, by cluster.
func (m *memberDrives) stopDrives(key types.NamespacedName) map[string]*memberDrive {
	prefix := key.String() + "/"
	out := map[string]*memberDrive{}
	m.mu.Lock()
	for id, d := range m.drives {
		if cluster, ok := strings.CutPrefix(id, prefix); ok {
			d.cancel()
			out[cluster] = d
		}
	}
	m.mu.Unlock()
	for _, d := range out {
		<-d.done
	}
	return out
}

// abort aborts the member run if it still moves; aborted says it did.
func (m *memberDrives) abort(ctx context.Context, cv *v1alpha1.ClusterVersion, cluster, run string) (bool, error) {
	c, err := m.open(ctx, cv, cluster)
	if err != nil {
		return false, fmt.Errorf("stop run %s on cluster %s: %w", run, cluster, err)
	}
	r, err := c.sess.Store().Get(ctx, run)
	if errors.Is(err, runstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read run %s on cluster %s: %w", run, cluster, err)
	}
	if !moving(r) {
		return false, nil
	}
	if _, err := c.sess.Abort(ctx, run); err != nil {
		return false, fmt.Errorf("abort run %s on cluster %s: %w", run, cluster, err)
	}
	return true, nil
}

// drop forgets a fleet's drives and sessions, its drives cancelled first
// and none started again (a fleet gone without its finalizer leaves its
// runs saved where they stopped, as a plan does; a wait still on one of
// its operations would otherwise resume it).
func (m *memberDrives) drop(key types.NamespacedName) {
	prefix := key.String() + "/"
	m.mu.Lock()
	for id, o := range m.opened {
		if strings.HasPrefix(id, prefix) {
			m.closed[o.member.uid] = true
			delete(m.opened, id)
		}
	}
	m.mu.Unlock()
	m.stopDrives(key)
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := range m.drives {
		if strings.HasPrefix(id, prefix) {
			delete(m.drives, id)
		}
	}
}
