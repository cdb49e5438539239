package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metadataOnly asks the API server for an object's metadata alone, as
// client-go's metadata client does: a CRD's answer without its schemas
// is a few hundred bytes instead of tens of kilobytes.
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// Unmoved tells whether every object of s is still as s holds it: the
// same UID at the same resourceVersion, or still absent. It reads only
// metadata, several objects at a time, so a snapshot read a while ago
// (before the lease, beside preflight) can be trusted as a read now for
// a fraction of the cost of reading again. The first object found moved
// ends the reads; errors are returned as they are, and the caller reads
// again rather than trust the snapshot.
func (c *Client) Unmoved(ctx context.Context, s *Snapshot) (bool, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(takeReads)
	var moved atomic.Bool
	for _, e := range s.Entries {
		g.Go(func() error {
			now, err := c.metadataOf(gctx, e)
			if err != nil {
				return fmt.Errorf("get %s: %w", e.Ref, err)
			}
			if !sameAs(e, now) {
				moved.Store(true)
				return errMoved
			}
			return nil
		})
	}
	err := g.Wait()
	if moved.Load() {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

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
	return e.Object.GetUID() == now.UID && e.Object.GetResourceVersion() == now.ResourceVersion
}
