package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Entry is one object as it was before the stage: Object nil means it did
// not exist (the stage may create it).
type Entry struct {
	Ref    step.Ref                   `json:"ref"`
	Object *unstructured.Unstructured `json:"object,omitempty"`
	// raw is the API server's JSON that Take decoded Object from:
	// encoding the snapshot copies it instead of marshalling Object's
	// maps again, which took ~30 ms of a stage of Liqo's 28 CRDs (1.5 MB).
	// Only Take sets it, and nothing changes a taken Object before Save.
	raw []byte
}

// MarshalJSON writes the server's bytes of a taken object as they came.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry // without this method
	if len(e.raw) == 0 || e.Object == nil {
		return json.Marshal(plain(e))
	}
	ref, err := json.Marshal(e.Ref)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"ref":%s,"object":%s}`, ref, e.raw), nil
}

// Snapshot is every object a stage touches, as it was before the stage.
type Snapshot struct {
	Entries []Entry `json:"entries"`
	// RunUID is the UID of the run whose stage it backs up, so a run
	// re-created under an earlier one's name never takes that one's
	// backup for its own (Find).
	RunUID string `json:"runUID,omitempty"`
	// HelmReleases are the revisions the stage's Helm releases were at
	// when it was taken: kept with the objects, so a backup found after a
	// stop holds all a rollback needs (Find), as the record's ref does.
	HelmReleases []v1alpha1.HelmRevision `json:"helmReleases,omitempty"`
}

// Counts tells how many objects existed and how many were absent.
func (s *Snapshot) Counts() (objects, absent int) {
	for _, e := range s.Entries {
		if e.Object == nil {
			absent++
		} else {
			objects++
		}
	}
	return objects, absent
}

// Held returns what the snapshot holds for ref, matched by group, kind,
// namespace and name (a step may name apps/v1 where a gate names the same
// object otherwise): held is false when no entry names it, obj nil when
// one does but the object did not exist. A gate reads a stage's snapshot
// through it (gates.Before).
func (s *Snapshot) Held(ref step.Ref) (obj *unstructured.Unstructured, held bool) {
	gk := ref.GroupVersionKind().GroupKind()
	for _, e := range s.Entries {
		if e.Ref.GroupVersionKind().GroupKind() == gk && e.Ref.Namespace == ref.Namespace && e.Ref.Name == ref.Name {
			return e.Object, true
		}
	}
	return nil, false
}

// takeReads bounds the GETs Take has in flight: a stage of 28 CRDs is
// read in the time of 4, without flooding the API server.
const takeReads = 8

// Read says where Take reads objects from.
type Read int

const (
	// Fresh reads each object from etcd: the snapshot is as new as the
	// moment Take returns.
	Fresh Read = iota
	// Cached reads each object from the API server's watch cache
	// (resourceVersion 0): the server then only encodes each object, not
	// reads and decodes it first, which on a platform of big CRDs halves
	// its work. The cache may lag etcd by a moment, so such a snapshot is
	// a backup only once Unmoved confirmed it with a read that does not.
	Cached
)

// Take GETs every ref, deduplicated, several at a time; the entries keep
// the refs' order. A missing object, or one whose kind is not served (its
// CRD is yet to come), is an Entry with a nil Object. Transient API errors
// are retried with backoff; permanent ones (forbidden, …) are returned.
func (c *Client) Take(ctx context.Context, refs []step.Ref, from Read) (*Snapshot, error) {
	return c.take(ctx, refs, from == Cached)
}

func (c *Client) take(ctx context.Context, refs []step.Ref, cached bool) (*Snapshot, error) {
	var unique []step.Ref
	seen := map[step.Ref]bool{}
	for _, ref := range refs {
		if !seen[ref] {
			seen[ref] = true
			unique = append(unique, ref)
		}
	}
	entries := make([]Entry, len(unique))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(takeReads)
	for i, ref := range unique {
		g.Go(func() error {
			obj, raw, err := c.getRaw(gctx, ref, cached)
			if err != nil {
				return fmt.Errorf("get %s: %w", ref, err)
			}
			entries[i] = Entry{Ref: ref, Object: obj, raw: raw}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &Snapshot{Entries: entries}, nil
}

// getRaw reads ref's object, retrying transient errors, and returns it
// with the JSON the API server answered; nil when it does not exist or
// its kind is not served.
func (c *Client) getRaw(ctx context.Context, ref step.Ref, cached bool) (*unstructured.Unstructured, []byte, error) {
	var raw []byte
	err := c.retry(ctx, func() error {
		gvr, ns, err := c.located(ref)
		if err != nil {
			return err
		}
		req := c.jsonReads.Get().AbsPath(objectPath(gvr, ns, ref.Name))
		if cached {
			req = req.Param("resourceVersion", "0")
		}
		raw, err = req.Do(ctx).Raw()
		return err
	})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", ref, err)
	}
	return obj, raw, nil
}

// objectPath is where the API server serves one object.
func objectPath(gvr schema.GroupVersionResource, namespace, name string) string {
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespace != "" {
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	return p + "/" + gvr.Resource + "/" + url.PathEscape(name)
}

// get is getRaw without the server's bytes.
func (c *Client) get(ctx context.Context, ref step.Ref) (*unstructured.Unstructured, error) {
	obj, _, err := c.getRaw(ctx, ref, false)
	return obj, err
}
