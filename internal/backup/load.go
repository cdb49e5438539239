package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// ErrCorrupt matches every *CorruptError: the backup cannot be trusted, and
// restoring part of it would be worse than restoring none.
var ErrCorrupt = errors.New("backup is corrupt")

// CorruptError says which backup Secret is missing or altered, and how.
type CorruptError struct {
	// Secrets are the Secrets concerned, as namespace/name: one for a chunk
	// problem, all of them for a problem of the whole snapshot.
	Secrets []string
	Problem string
}

func (e *CorruptError) Error() string {
	switch len(e.Secrets) {
	case 0:
		return fmt.Sprintf("%v: %s", ErrCorrupt, e.Problem)
	case 1:
		return fmt.Sprintf("%v: secret %s: %s", ErrCorrupt, e.Secrets[0], e.Problem)
	}
	return fmt.Sprintf("%v: secrets %s: %s", ErrCorrupt, strings.Join(e.Secrets, ", "), e.Problem)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Load reads the Secrets of a ref and verifies every chunk's checksum and
// the whole snapshot's. A missing Secret or a mismatch is a *CorruptError
// that names the Secret; other errors are IO that failed after retries.
func (c *Client) Load(ctx context.Context, ref v1alpha1.BackupRef) (*Snapshot, error) {
	if len(ref.Secrets) == 0 {
		return nil, &CorruptError{Problem: "the backup ref names no Secret"}
	}
	all := make([]string, len(ref.Secrets))
	for i, name := range ref.Secrets {
		all[i] = c.namespace + "/" + name
	}
	var packed []byte
	for i, name := range ref.Secrets {
		chunk, err := c.readChunk(ctx, ref, i, name)
		if err != nil {
			return nil, err
		}
		packed = append(packed, chunk...)
	}
	raw, err := gunzip(packed)
	if err != nil {
		return nil, &CorruptError{Secrets: all, Problem: fmt.Sprintf("decompress: %v", err)}
	}
	if got := sha256Hex(raw); got != ref.SHA256 {
		return nil, &CorruptError{Secrets: all, Problem: fmt.Sprintf("snapshot has sha256 %s, the backup ref says %s", got, ref.SHA256)}
	}
	var s Snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &CorruptError{Secrets: all, Problem: fmt.Sprintf("decode snapshot: %v", err)}
	}
	return &s, nil
}

// readChunk reads the index-th Secret of ref and checks it is that chunk of
// that snapshot, unaltered.
func (c *Client) readChunk(ctx context.Context, ref v1alpha1.BackupRef, index int, name string) ([]byte, error) {
	id := c.namespace + "/" + name
	corrupt := func(format string, a ...any) error {
		return &CorruptError{Secrets: []string{id}, Problem: fmt.Sprintf("chunk %d of %d: ", index, len(ref.Secrets)) + fmt.Sprintf(format, a...)}
	}
	api := c.secrets.CoreV1().Secrets(c.namespace)
	var sec *corev1.Secret
	err := c.retry(ctx, func() error {
		var err error
		sec, err = api.Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, corrupt("missing")
	}
	if err != nil {
		return nil, fmt.Errorf("load backup: get secret %s: %w", id, err)
	}
	switch {
	case sec.Type != SecretType:
		return nil, corrupt("type is %q, not %q", sec.Type, SecretType)
	case sec.Annotations[AnnotationSnapshotSHA256] != ref.SHA256:
		return nil, corrupt("belongs to snapshot sha256 %q, the backup ref says %s", sec.Annotations[AnnotationSnapshotSHA256], ref.SHA256)
	case sec.Annotations[AnnotationChunk] != fmt.Sprintf("%d/%d", index, len(ref.Secrets)):
		return nil, corrupt("is marked chunk %q", sec.Annotations[AnnotationChunk])
	}
	data, ok := sec.Data[dataKey]
	if !ok {
		return nil, corrupt("no %q data", dataKey)
	}
	want := sec.Annotations[AnnotationChunkSHA256]
	if got := sha256Hex(data); got != want {
		return nil, corrupt("data does not match its checksum: sha256 %s recorded, %s found", want, got)
	}
	return data, nil
}
