package backup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Key names one stage attempt's backup.
type Key struct {
	Run     string `json:"run"`
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
}

// AnnotationChunkBytes is the size of a chunk, so List need not read data.
const AnnotationChunkBytes = "upshift.dev/chunk-bytes"

// Save writes the snapshot as gzip-compressed JSON into Secrets of under
// 1 MiB each, named from the key and the chunk index (a crashed Save is
// simply redone: create or update), then reads every Secret back and
// verifies the checksums before returning the ref. Chunks left over from an
// earlier, larger Save of the same key are deleted.
func (c *Client) Save(ctx context.Context, key Key, s *Snapshot) (v1alpha1.BackupRef, error) {
	if err := key.validate(); err != nil {
		return v1alpha1.BackupRef{}, err
	}
	if s == nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: no snapshot", key)
	}
	raw, packed, err := encode(s)
	if err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: %w", key, err)
	}
	objects, absent := s.Counts()
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second)) // what JSON keeps
	ref := v1alpha1.BackupRef{SHA256: sha256Hex(raw), Objects: objects, Absent: absent, CreatedAt: &now}

	if err := c.ensureNamespace(ctx); err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: %w", key, err)
	}
	chunks := split(packed, chunkSize)
	for i, chunk := range chunks {
		sec := c.chunkSecret(key, ref, i, len(chunks), chunk)
		if err := c.put(ctx, sec); err != nil {
			return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: write secret %s/%s: %w", key, c.namespace, sec.Name, err)
		}
		ref.Secrets = append(ref.Secrets, sec.Name)
		if c.AfterChunkWritten != nil {
			c.AfterChunkWritten(key, i)
		}
	}
	if _, err := c.Load(ctx, ref); err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: read back: %w", key, err)
	}
	if err := c.deleteSecrets(ctx, key.labels(), func(k Key, name string) bool {
		return k == key && !slices.Contains(ref.Secrets, name)
	}); err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: delete stale chunks: %w", key, err)
	}
	return ref, nil
}

func (c *Client) chunkSecret(key Key, ref v1alpha1.BackupRef, index, count int, chunk []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      SecretName(key, index),
			Namespace: c.namespace,
			Labels:    key.labels(),
			Annotations: map[string]string{
				LabelRun:                 key.Run,
				LabelStage:               key.Stage,
				LabelAttempt:             strconv.Itoa(key.Attempt),
				AnnotationChunk:          fmt.Sprintf("%d/%d", index, count),
				AnnotationChunkSHA256:    sha256Hex(chunk),
				AnnotationChunkBytes:     strconv.Itoa(len(chunk)),
				AnnotationSnapshotSHA256: ref.SHA256,
				AnnotationObjects:        strconv.Itoa(ref.Objects),
				AnnotationAbsent:         strconv.Itoa(ref.Absent),
				AnnotationCreatedAt:      ref.CreatedAt.UTC().Format(time.RFC3339),
			},
		},
		Type: SecretType,
		Data: map[string][]byte{dataKey: chunk},
	}
}

// put creates the Secret or replaces the one of the same name.
func (c *Client) put(ctx context.Context, sec *corev1.Secret) error {
	api := c.secrets.CoreV1().Secrets(c.namespace)
	again := func(err error) bool {
		return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || retriable(err)
	}
	return c.retryIf(ctx, again, func() error {
		cur, err := api.Get(ctx, sec.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, sec, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cur.Type != SecretType {
			return permanent{fmt.Errorf("a Secret of type %q has this name", cur.Type)}
		}
		next := sec.DeepCopy()
		next.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

// ensureNamespace creates the backup namespace when it is missing; a
// client that may not read namespaces goes on and lets the writes tell.
func (c *Client) ensureNamespace(ctx context.Context) error {
	api := c.secrets.CoreV1().Namespaces()
	err := c.retry(ctx, func() error {
		_, err := api.Get(ctx, c.namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.namespace}}, metav1.CreateOptions{})
		}
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if apierrors.IsForbidden(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", c.namespace, err)
	}
	return nil
}
