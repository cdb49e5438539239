package backup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// DefaultReadyTimeout is how long Restore waits for restored workloads to
// become Current, and for deleted objects to be gone.
const DefaultReadyTimeout = 2 * time.Minute

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// ReadyTimeout bounds the wait for restored workloads to be Current
	// (and for deleted objects to be gone); zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Managed are objects another tool puts back before the restore (a
	// Helm rollback): they are not written, only verified against the
	// snapshot, so the restore does not fight that tool over them.
	Managed map[step.Ref]bool
}

// errTerminating: the live object is being deleted, so it cannot be
// replaced until it is gone.
var errTerminating = errors.New("being deleted")

// Restore puts every object back as it was in the snapshot, then verifies.
//
//   - An object that existed replaces the live one (PUT with the live
//     resourceVersion, so fields added since are removed); if it is gone it
//     is created again. CRDs come first, then Namespaces, then the rest.
//   - An object absent from the snapshot but present now is deleted, and
//     waited for until gone; CustomResourceDefinitions are kept and listed
//     in Kept instead, since deleting one deletes its data.
//   - Each restored object is read back and compared with its snapshot
//     (Compare), and each must become Current (kstatus) within the timeout.
//
// Whatever does not hold is listed in Differences; fields that another
// manager took over since the restore are listed in NotCompared (see
// Compare for the rule). The error is only for
// IO that could not be done after retries; the record is returned with it.
func (c *Client) Restore(ctx context.Context, s *Snapshot, opts RestoreOptions) (v1alpha1.Rollback, error) {
	var rb v1alpha1.Rollback
	if s == nil {
		return rb, errors.New("restore: no snapshot")
	}
	timeout := opts.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	p := partition(s, opts)
	var errs []error
	restored, err := c.putBack(ctx, &rb, p.crds, p.others, timeout)
	if err != nil {
		errs = append(errs, err)
	}

	// Delete what the stage created, CRDs excepted.
	deleted, kept, diffs, err := c.deleteCreated(ctx, p.created, timeout)
	rb.Deleted, rb.Kept = deleted, kept
	rb.Differences = append(rb.Differences, diffs...)
	if err != nil {
		errs = append(errs, err)
	}
	// What another tool restored is verified like the rest; what the
	// stage created must be gone.
	for _, e := range p.managed {
		if e.Object != nil {
			restored = append(restored, e)
			continue
		}
		live, err := c.get(ctx, e.Ref)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("verify %s: %w", e.Ref, err))
		case live != nil:
			rb.Differences = append(rb.Differences, fmt.Sprintf("%s: created by the stage, still present after its release was rolled back", e.Ref))
		}
	}
	if err := c.verify(ctx, &rb, restored, timeout); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return rb, fmt.Errorf("restore: %w", errors.Join(errs...))
	}
	return rb, nil
}

// parts are a snapshot's entries as a restore treats them.
type parts struct {
	crds, others []Entry // existed: put back, CRDs first
	created      []Entry // the stage may have created: deleted
	managed      []Entry // another tool put back (RestoreOptions.Managed)
}

func partition(s *Snapshot, opts RestoreOptions) parts {
	var p parts
	for _, e := range s.Entries {
		switch {
		case opts.Managed[e.Ref]:
			p.managed = append(p.managed, e)
		case e.Object == nil:
			p.created = append(p.created, e)
		case isCRD(e.Ref):
			p.crds = append(p.crds, e)
		default:
			p.others = append(p.others, e)
		}
	}
	// Namespaces before what lives in them.
	sort.SliceStable(p.others, func(i, j int) bool { return isNamespace(p.others[i].Ref) && !isNamespace(p.others[j].Ref) })
	return p
}

// putBack writes back what existed: CRDs first, waited for until
// Established, so their kinds are served again for the rest.
func (c *Client) putBack(ctx context.Context, rb *v1alpha1.Rollback, crds, others []Entry, timeout time.Duration) ([]Entry, error) {
	var restored []Entry
	var errs []error
	for i, group := range [][]Entry{crds, others} {
		var names []string
		for _, e := range group {
			problem, err := c.restoreOne(ctx, e)
			switch {
			case err != nil:
				errs = append(errs, err)
			case problem != "":
				rb.Differences = append(rb.Differences, fmt.Sprintf("%s: not restored: %s", e.Ref, problem))
			default:
				rb.Restored++
				restored = append(restored, e)
				names = append(names, e.Ref.Name)
			}
		}
		if i == 0 && len(names) > 0 {
			rb.Differences = append(rb.Differences, c.waitEstablished(ctx, names, timeout)...)
		}
	}
	return restored, errors.Join(errs...)
}

func isNamespace(r step.Ref) bool {
	return r.GroupVersionKind().GroupKind().String() == "Namespace"
}

func isCRD(r step.Ref) bool {
	gk := r.GroupVersionKind().GroupKind()
	return gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition"
}

// restoreOne replaces (or creates again) one object. A problem is a reason
// it could not be restored that no retry cures (an immutable field, an
// object stuck in deletion, a kind no longer served); err is failed IO.
func (c *Client) restoreOne(ctx context.Context, e Entry) (problem string, err error) {
	again := func(err error) bool {
		return errors.Is(err, errTerminating) || apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || retriableOrNoMatch(err)
	}
	var liveUID types.UID
	err = c.retryIf(ctx, again, func() error {
		ri, err := c.resource(e.Ref)
		if err != nil {
			return err
		}
		live, err := ri.Get(ctx, e.Ref.Name, metav1.GetOptions{})
		if live != nil {
			liveUID = live.GetUID()
		}
		if apierrors.IsNotFound(err) {
			_, err = ri.Create(ctx, createBody(e.Object), metav1.CreateOptions{FieldManager: FieldManager})
			return err
		}
		if err != nil {
			return err
		}
		if live.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%w (finalizers %v)", errTerminating, live.GetFinalizers())
		}
		body := e.Object.DeepCopy()
		body.SetResourceVersion(live.GetResourceVersion())
		body.SetUID(live.GetUID()) // the stage may have recreated it
		_, err = ri.Update(ctx, body, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
	if apierrors.IsInvalid(err) && liveUID != "" && e.Object.GetUID() != "" && liveUID != e.Object.GetUID() {
		// The stage re-created the object with a field that cannot change
		// in place (a Deployment's selector): re-create it once more.
		return c.recreate(ctx, e, liveUID)
	}
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, errTerminating), meta.IsNoMatchError(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return err.Error(), nil
	}
	return "", fmt.Errorf("restore %s: %w", e.Ref, err)
}

// createBody is a snapshot object without what the server assigns, but
// with the snapshot's managedFields: the server takes them as given (and
// adds the fields this write sets under FieldManager), so a re-created
// object keeps the ownership it had, as a replaced one does, and
// verification judges both alike.
func createBody(obj *unstructured.Unstructured) *unstructured.Unstructured {
	body := kube.WithoutServerMetadata(obj)
	body.SetManagedFields(obj.GetManagedFields())
	return body
}

// waitEstablished waits for restored CRDs to serve their kinds again.
func (c *Client) waitEstablished(ctx context.Context, names []string, timeout time.Duration) []string {
	var diffs []string
	for _, name := range names {
		if _, err := c.waiter.WaitCRDEstablished(ctx, name, timeout); err != nil {
			diffs = append(diffs, fmt.Sprintf("customresourcedefinition %s: not Established: %v", name, err))
		}
	}
	c.mapper.Reset()
	return diffs
}

// deleteCreated deletes the objects the stage created, newest first and
// Namespaces last, then waits until they are gone. CRDs are kept.
func (c *Client) deleteCreated(ctx context.Context, created []Entry, timeout time.Duration) (deleted int, kept, diffs []string, err error) {
	order := make([]Entry, 0, len(created))
	for i := len(created) - 1; i >= 0; i-- {
		order = append(order, created[i])
	}
	sort.SliceStable(order, func(i, j int) bool { return !isNamespace(order[i].Ref) && isNamespace(order[j].Ref) })

	type doomed struct {
		ref step.Ref
		uid types.UID
	}
	var gone []doomed
	var errs []error
	for _, e := range order {
		live, err := c.get(ctx, e.Ref)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("delete %s: %w", e.Ref, err))
			continue
		case live == nil:
			continue
		case isCRD(e.Ref):
			kept = append(kept, fmt.Sprintf("%s: created by the stage, kept: deleting a CRD deletes its data", e.Ref))
			continue
		}
		uid := live.GetUID()
		err = c.retry(ctx, func() error {
			ri, err := c.resource(e.Ref)
			if err != nil {
				return err
			}
			policy := metav1.DeletePropagationBackground
			return ri.Delete(ctx, e.Ref.Name, metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
		})
		switch {
		case err == nil, apierrors.IsNotFound(err), meta.IsNoMatchError(err):
			gone = append(gone, doomed{e.Ref, uid})
		case apierrors.IsConflict(err): // the uid precondition failed
			diffs = append(diffs, fmt.Sprintf("%s: created by the stage, not deleted: it was replaced while deleting", e.Ref))
		default:
			errs = append(errs, fmt.Errorf("delete %s: %w", e.Ref, err))
		}
	}

	deadline := time.Now().Add(timeout)
	for _, d := range gone {
		problem, err := c.waitGone(ctx, d.ref, d.uid, deadline, timeout)
		switch {
		case err != nil:
			errs = append(errs, err)
		case problem != "":
			diffs = append(diffs, fmt.Sprintf("%s: created by the stage, %s", d.ref, problem))
		default:
			deleted++
		}
	}
	return deleted, kept, diffs, errors.Join(errs...)
}

// waitGone polls until the object with that uid no longer exists.
func (c *Client) waitGone(ctx context.Context, ref step.Ref, uid types.UID, deadline time.Time, timeout time.Duration) (string, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		live, err := c.get(ctx, ref)
		switch {
		case err != nil:
			return "", fmt.Errorf("wait for %s to be deleted: %w", ref, err)
		case live == nil:
			return "", nil
		case live.GetUID() != uid:
			return "deleted, then created again by something else", nil
		case time.Now().After(deadline):
			return fmt.Sprintf("still present %s after deleting it (finalizers %v)", kube.ShortDuration(timeout), live.GetFinalizers()), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for %s to be deleted: %w", ref, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// recreate deletes the live object (the one with uid, dependents first)
// and creates the snapshot's again.
func (c *Client) recreate(ctx context.Context, e Entry, uid types.UID) (problem string, err error) {
	err = c.retry(ctx, func() error {
		ri, err := c.resource(e.Ref)
		if err != nil {
			return err
		}
		fg := metav1.DeletePropagationForeground
		return ri.Delete(ctx, e.Ref.Name, metav1.DeleteOptions{PropagationPolicy: &fg, Preconditions: &metav1.Preconditions{UID: &uid}})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("re-create %s: %w", e.Ref, err)
	}
	timeout := DefaultReadyTimeout
	if problem, err := c.waitGone(ctx, e.Ref, uid, time.Now().Add(timeout), timeout); problem != "" || err != nil {
		return problem, err
	}
	err = c.retry(ctx, func() error {
		ri, err := c.resource(e.Ref)
		if err != nil {
			return err
		}
		_, err = ri.Create(ctx, createBody(e.Object), metav1.CreateOptions{FieldManager: FieldManager})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("re-create %s: %w", e.Ref, err)
	}
	return "", nil
}
