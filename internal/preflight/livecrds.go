package preflight

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

// liveCRD is a CRD as the cluster has it, or why it could not be read.
type liveCRD struct {
	obj *unstructured.Unstructured
	err error
}

// readLiveCRDs starts reading every CRD the plan writes, eight at a
// time, while the rest of preflight goes on: preflight compares each with
// the plan's once it has walked the plan (compareStoredVersions), and a
// platform ships tens of them (Liqo 28), which read one after the other,
// or before everything else, made the user wait before the run began.
func (pf *preflight) readLiveCRDs(ctx context.Context) {
	var names []string
	seen := map[string]bool{}
	for _, objs := range pf.p.Objects {
		for _, o := range objs {
			if name := o.GetName(); isCRD(o) && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	pf.liveCRDs = make(map[string]liveCRD, len(names))
	pf.crdsRead = make(chan struct{})
	if len(names) == 0 {
		close(pf.crdsRead)
		return
	}
	// The reads are issued on a goroutine of their own: the errgroup's
	// limit blocks whoever issues the ninth until one ends.
	go func() {
		defer close(pf.crdsRead)
		// The ones the first stage's snapshot holds, read ahead beside
		// this preflight (Deps.Ahead), are not read twice: on a
		// platform of many CRDs, reading both ways doubled the API
		// server's work and the preflight's wait. That snapshot is read
		// from the API server's cache, a moment behind etcd at most: a
		// stored version added in that moment is still refused by the
		// API server itself, at the stage's write.
		var ahead *backup.Snapshot
		if pf.d.Ahead != nil {
			ahead = pf.d.Ahead(ctx)
		}
		var mu sync.Mutex
		var g errgroup.Group
		g.SetLimit(8)
		for _, name := range names {
			if live, ok := heldCRD(ahead, name); ok {
				mu.Lock()
				pf.liveCRDs[name] = live
				mu.Unlock()
				continue
			}
			g.Go(func() error {
				obj, err := pf.getCRD(ctx, name)
				mu.Lock()
				pf.liveCRDs[name] = liveCRD{obj: obj, err: err}
				mu.Unlock()
				return nil // each CRD's error is its own, reported where it is compared
			})
		}
		_ = g.Wait()
	}()
}

// heldCRD is the CRD as the snapshot holds it (its absence as a NotFound
// error); false when the snapshot has no word on it.
func heldCRD(snap *backup.Snapshot, name string) (liveCRD, bool) {
	if snap == nil {
		return liveCRD{}, false
	}
	obj, held := snap.Held(step.Ref{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name})
	switch {
	case !held:
		return liveCRD{}, false
	case obj == nil:
		return liveCRD{err: apierrors.NewNotFound(kube.CRDResource.GroupResource(), name)}, true
	}
	return liveCRD{obj: obj}, true
}

// liveCRD is the CRD read up front, or read now if it was not.
func (pf *preflight) liveCRD(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	<-pf.crdsRead
	if l, ok := pf.liveCRDs[name]; ok {
		return l.obj, l.err
	}
	return pf.getCRD(ctx, name)
}

// getCRD reads a CRD for the stored-version checks, which need its
// versions and status only: as protobuf, without its schemas, where the
// clients can (kube.NewCRDClient).
func (pf *preflight) getCRD(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	if pf.d.Clients.CRDs == nil {
		return pf.d.Clients.Dynamic.Resource(kube.CRDResource).Get(ctx, name, metav1.GetOptions{})
	}
	crd, err := pf.d.Clients.CRDs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return kube.SlimCRD(crd)
}
