package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Claim makes a backup saved unclaimed (SaveUnclaimed) its stage's: from
// then on Find answers it, so a run resumed after a stop finds the backup
// its stage began with even if the record of that start was never saved.
// Only the mark on chunk 0 is removed, in one JSON patch that first tests
// that the chunk still belongs to ref's snapshot: a Save since then wrote
// over it, and claiming that would make Find answer a backup nobody
// verified as this one.
func (c *Client) Claim(ctx context.Context, ref v1alpha1.BackupRef) error {
	if len(ref.Secrets) == 0 {
		return fmt.Errorf("claim backup: the ref names no Secret")
	}
	name := ref.Secrets[0]
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": annotationPath(AnnotationSnapshotSHA256), "value": ref.SHA256},
		{"op": "remove", "path": annotationPath(AnnotationUnclaimed)},
	})
	if err != nil {
		return err
	}
	api := c.secrets.CoreV1().Secrets(c.namespace)
	err = c.retry(ctx, func() error {
		_, err := api.Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err == nil {
		return nil
	}
	// The test failed, or the mark is gone: which one, the chunk tells.
	cur, gerr := api.Get(ctx, name, metav1.GetOptions{})
	switch {
	case gerr != nil:
		return fmt.Errorf("claim backup %s/%s: %w", c.namespace, name, err)
	case cur.Annotations[AnnotationSnapshotSHA256] != ref.SHA256:
		return fmt.Errorf("claim backup %s/%s: it holds snapshot %s now, not %s", c.namespace, name, cur.Annotations[AnnotationSnapshotSHA256], ref.SHA256)
	case cur.Annotations[AnnotationUnclaimed] != "":
		return fmt.Errorf("claim backup %s/%s: %w", c.namespace, name, err)
	}
	return nil // claimed already
}

// annotationPath is the JSON pointer (RFC 6901) of an annotation.
func annotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
