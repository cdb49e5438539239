package backup

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

// Entry is one object as it was before the stage: Object nil means it did
// not exist (the stage may create it).
type Entry struct {
	Ref    step.Ref                   `json:"ref"`
	Object *unstructured.Unstructured `json:"object,omitempty"`
}

// Snapshot is every object a stage touches, as it was before the stage.
type Snapshot struct {
	Entries []Entry `json:"entries"`
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

// Take GETs every ref, deduplicated and in order. A missing object, or one
// whose kind is not served (its CRD is yet to come), is an Entry with a nil
// Object. Transient API errors are retried with backoff; permanent ones
// (forbidden, …) are returned.
func (c *Client) Take(ctx context.Context, refs []step.Ref) (*Snapshot, error) {
	s := &Snapshot{Entries: []Entry{}}
	seen := map[step.Ref]bool{}
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		obj, err := c.get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", ref, err)
		}
		s.Entries = append(s.Entries, Entry{Ref: ref, Object: obj})
	}
	return s, nil
}

// get reads ref's object, retrying transient errors; nil when it does not
// exist or its kind is not served.
func (c *Client) get(ctx context.Context, ref step.Ref) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	err := c.retry(ctx, func() error {
		ri, err := c.resource(ref)
		if err != nil {
			return err
		}
		obj, err = ri.Get(ctx, ref.Name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}
