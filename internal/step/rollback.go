package step

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// What a kind adds to its stage's backup and rollback, asked of it
// through these optional interfaces (the registry, internal/steps, builds
// them; they need none of the run's sources but their own).

// Keeper is a kind whose state before the stage goes into the stage's
// backup besides its objects: a Helm release's revision, which a
// rollback returns it to.
type Keeper interface {
	Keep(ctx context.Context) (v1alpha1.HelmRevision, error)
}

// Reverter is a kind that undoes, in a rollback, what restoring its
// stage's objects cannot: a Helm release returned to the revision the
// stage's backup holds, a down-migration Job run. Reverters run last step
// first, before the objects are restored.
type Reverter interface {
	Revert(ctx context.Context, before *v1alpha1.BackupRef) (Reverted, error)
}

// Reverted is what a Revert did. A Result that did not succeed stops the
// rollback there, for an operator; an error is the cluster's (the run
// stops as saved).
type Reverted struct {
	Result
	// Owns tells the stage's objects the revert put back itself (a
	// release's): the restore verifies them instead of writing over them.
	// Nil: none.
	Owns func(*unstructured.Unstructured) bool
}

// Renderer is an executor that can say, without changing anything, which
// objects it will write and what they are (a chart rendered against the
// cluster): preflight checks the credentials and the CRDs among them.
type Renderer interface {
	Rendered(ctx context.Context) ([]Ref, []*unstructured.Unstructured, error)
}

// Reader is an executor that reads kinds besides its targets (the nodes
// a step spreads over): preflight checks the credentials may read them.
type Reader interface {
	Reads() []schema.GroupVersionResource
}

// Access is one right a step needs: Verb on Kind's resource, or on its
// Subresource when set, in Namespace ("" for cluster-wide or a
// cluster-scoped kind).
type Access struct {
	Verb        string
	Kind        schema.GroupVersionKind
	Subresource string
	Namespace   string
}

// Accessor is an executor that needs rights its targets and rendered
// objects do not show (a record it creates, its status subresource):
// preflight checks the kinds are served and the credentials have them.
type Accessor interface {
	Access() []Access
}
