package backup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/step"
)

// Unmoved tells whether every object of s is still as s holds it: the
// same UID at the same resourceVersion, or still absent. It reads only
// metadata, several reads at a time, so a snapshot read a while ago
// (before the lease, beside preflight) can be trusted as a read now for
// a fraction of the cost of reading again: objects of one resource and
// namespace, when there are many (a platform's CRDs), in one list, the
// others one by one. The first object found moved ends the reads; errors
// are returned as they are, and the caller reads again rather than trust
// the snapshot.
//
// cache, if not nil, is asked first (unmovedIn): when it knows every
// object and shows each as s holds it, nothing is read.
func (c *Client) Unmoved(ctx context.Context, s *Snapshot, cache MetaLookup) (bool, error) {
	if cache != nil && s.unmovedIn(cache) {
		return true, nil
	}
	groups, unserved, err := c.byPlace(s.Entries)
	if err != nil {
		return false, err
	}
	for _, e := range unserved {
		if e.Object != nil {
			return false, nil // its kind is served no more
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(takeReads)
	var moved atomic.Bool
	check := func(e Entry, now *metav1.ObjectMeta) error {
		if !sameAs(e, now) {
			moved.Store(true)
			return errMoved
		}
		return nil
	}
	for _, grp := range groups {
		if len(grp.entries) >= listFrom {
			g.Go(func() error {
				now, err := c.metadataIn(gctx, grp)
				if err != nil {
					return err
				}
				for _, e := range grp.entries {
					if err := check(e, now[e.Ref.Name]); err != nil {
						return err
					}
				}
				return nil
			})
			continue
		}
		for _, e := range grp.entries {
			g.Go(func() error {
				now, err := c.metadataOf(gctx, grp, e.Ref.Name)
				if err != nil {
					return fmt.Errorf("get %s: %w", e.Ref, err)
				}
				return check(e, now)
			})
		}
	}
	err = g.Wait()
	if moved.Load() {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// listFrom is how many objects of one resource and namespace Unmoved
// reads in one list rather than one by one: from there a list is fewer
// round trips than the GETs takeReads at a time.
const listFrom = takeReads

// place is the entries of one resource in one namespace.
type place struct {
	gvr     schema.GroupVersionResource
	ns      string
	entries []Entry
}

// byPlace groups the entries by resource and namespace; unserved are
// those whose kind the API server does not serve now (the mapper asked
// discovery again before it said so): absent, whatever the snapshot says.
func (c *Client) byPlace(entries []Entry) (places []*place, unserved []Entry, err error) {
	type key struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	at := map[key]*place{}
	notServed := map[schema.GroupVersionKind]bool{} // asked once: each miss asks discovery again
	for _, e := range entries {
		if notServed[e.Ref.GroupVersionKind()] {
			unserved = append(unserved, e)
			continue
		}
		gvr, ns, err := c.located(e.Ref)
		switch {
		case meta.IsNoMatchError(err):
			notServed[e.Ref.GroupVersionKind()] = true
			unserved = append(unserved, e)
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", e.Ref, err)
		}
		k := key{gvr, ns}
		p := at[k]
		if p == nil {
			p = &place{gvr: gvr, ns: ns}
			places = append(places, p)
			at[k] = p
		}
		p.entries = append(p.entries, e)
	}
	return places, unserved, nil
}

// metadataIn lists the metadata of every object of p's resource in its
// namespace, by name.
func (c *Client) metadataIn(ctx context.Context, p *place) (map[string]*metav1.ObjectMeta, error) {
	out := map[string]*metav1.ObjectMeta{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		var list *metav1.PartialObjectMetadataList
		err := c.retry(ctx, func() (err error) {
			list, err = c.objMeta.Resource(p.gvr).Namespace(p.ns).List(ctx, opts)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p.gvr.Resource, err)
		}
		for i := range list.Items {
			out[list.Items[i].Name] = &list.Items[i].ObjectMeta
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}

// errMoved ends Unmoved's other reads once one object is found moved.
var errMoved = errors.New("an object moved")

// metadataOf reads the metadata of p's object named name now; nil when
// it does not exist.
func (c *Client) metadataOf(ctx context.Context, p *place, name string) (*metav1.ObjectMeta, error) {
	var m *metav1.PartialObjectMetadata
	err := c.retry(ctx, func() (err error) {
		m, err = c.objMeta.Resource(p.gvr).Namespace(p.ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &m.ObjectMeta, nil
}

// MetaLookup answers an object's metadata as a cache of the caller's
// holds it: nil when the cache holds no such object, known false when
// the cache cannot tell (it does not watch the object's kind and
// namespace, or is not in sync).
type MetaLookup func(ref step.Ref) (now *metav1.ObjectMeta, known bool)

// unmovedIn is Unmoved answered by a cache instead of the API server:
// true only when lookup knows every object of s and shows each as s
// holds it. A cache shows the objects as they were a moment ago, so a
// write in that moment is missed, as one just after a read would be.
// False when it cannot tell, or shows anything else (it may also be
// behind s's reads): the API server is asked then (Unmoved).
func (s *Snapshot) unmovedIn(lookup MetaLookup) bool {
	for _, e := range s.Entries {
		now, known := lookup(e.Ref)
		if !known || !sameAs(e, now) {
			return false
		}
	}
	return true
}

// sameAs tells whether now is what e holds: both absent, or the same
// object at the same version.
func sameAs(e Entry, now *metav1.ObjectMeta) bool {
	if e.Object == nil || now == nil {
		return e.Object == nil && now == nil
	}
	// An object without a version (some aggregated APIs) cannot be told
	// unchanged.
	rv := e.Object.GetResourceVersion()
	return rv != "" && e.Object.GetUID() == now.UID && rv == now.ResourceVersion
}
