package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// metadataOnly asks the API server for an object's metadata alone, as
// client-go's metadata client does: a CRD's answer without its schemas
// is a few hundred bytes instead of tens of kilobytes.
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// Unmoved tells whether every object of s is still as s holds it: the
// same UID at the same resourceVersion, or still absent. It reads only
// metadata, several reads at a time, so a snapshot read a while ago
// (before the lease, beside preflight) can be trusted as a read now for
// a fraction of the cost of reading again: objects of one resource and
// namespace, when there are many (a platform's CRDs), in one list, the
// others one by one. The first object found moved ends the reads; errors
// are returned as they are, and the caller reads again rather than trust
// the snapshot.
func (c *Client) Unmoved(ctx context.Context, s *Snapshot) (bool, error) {
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
				now, err := c.metadataIn(gctx, grp.path)
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
				now, err := c.metadataOf(gctx, e)
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

// place is the entries of one resource in one namespace, and the path
// that lists them.
type place struct {
	path    string
	entries []Entry
}

// byPlace groups the entries by where they are listed; unserved are
// those whose kind the API server does not serve now (the mapper asked
// discovery again before it said so): absent, whatever the snapshot says.
func (c *Client) byPlace(entries []Entry) (places []*place, unserved []Entry, err error) {
	at := map[string]*place{}
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
		path := strings.TrimSuffix(objectPath(gvr, ns, ""), "/") // the collection
		p := at[path]
		if p == nil {
			p = &place{path: path}
			places = append(places, p)
			at[path] = p
		}
		p.entries = append(p.entries, e)
	}
	return places, unserved, nil
}

// metadataIn lists the metadata of every object at a collection path, by
// name.
func (c *Client) metadataIn(ctx context.Context, path string) (map[string]*metav1.ObjectMeta, error) {
	out := map[string]*metav1.ObjectMeta{}
	cont := ""
	for {
		var raw []byte
		err := c.retry(ctx, func() error {
			req := c.jsonReads.Get().AbsPath(path).SetHeader("Accept", metadataListOnly).Param("limit", "500")
			if cont != "" {
				req = req.Param("continue", cont)
			}
			var err error
			raw, err = req.Do(ctx).Raw()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", path, err)
		}
		var list metav1.PartialObjectMetadataList
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("decode the list of %s: %w", path, err)
		}
		for i := range list.Items {
			out[list.Items[i].Name] = &list.Items[i].ObjectMeta
		}
		if cont = list.Continue; cont == "" {
			return out, nil
		}
	}
}

// metadataListOnly is metadataOnly for a list.
const metadataListOnly = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

// errMoved ends Unmoved's other reads once one object is found moved.
var errMoved = errors.New("an object moved")

// metadataOf reads e's object's metadata now; nil when it does not exist
// or its kind is not served.
func (c *Client) metadataOf(ctx context.Context, e Entry) (*metav1.ObjectMeta, error) {
	var raw []byte
	err := c.retry(ctx, func() error {
		gvr, ns, err := c.located(e.Ref)
		if err != nil {
			return err
		}
		raw, err = c.jsonReads.Get().AbsPath(objectPath(gvr, ns, e.Ref.Name)).SetHeader("Accept", metadataOnly).Do(ctx).Raw()
		return err
	})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode the metadata of %s: %w", e.Ref, err)
	}
	return &m.ObjectMeta, nil
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
