package backup

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
// earlier, larger Save of the same key are deleted. s must not change
// while Save runs.
func (c *Client) Save(ctx context.Context, key Key, s *Snapshot) (v1alpha1.BackupRef, error) {
	return c.save(ctx, key, s, false)
}

// SaveUnclaimed is Save of a backup taken before its stage's turn (while
// the stage before it runs): it is written and verified the same, but
// marked unclaimed (AnnotationUnclaimed), and Find does not answer it
// until Claim: a resumed run must not adopt a backup that no stage began
// with, and that may be older than what its stage would find. A Save of
// the key writes over it.
func (c *Client) SaveUnclaimed(ctx context.Context, key Key, s *Snapshot) (v1alpha1.BackupRef, error) {
	return c.save(ctx, key, s, true)
}

func (c *Client) save(ctx context.Context, key Key, s *Snapshot, unclaimed bool) (v1alpha1.BackupRef, error) {
	if err := key.validate(); err != nil {
		return v1alpha1.BackupRef{}, err
	}
	if s == nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: no snapshot", key)
	}
	enc, err := encodeSnapshot(s)
	if err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: %w", key, err)
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second)) // what JSON keeps
	ref := v1alpha1.BackupRef{SHA256: enc.sha256, Objects: enc.objects, Absent: enc.absent, CreatedAt: &now}

	if err := c.ensureNamespace(ctx); err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: %w", key, err)
	}
	chunks := split(enc.packed, chunkSize)
	replaced := false // a chunk of an earlier Save of this key was there
	for i, chunk := range chunks {
		sec := c.chunkSecret(key, ref, i, len(chunks), chunk)
		if unclaimed && i == 0 {
			sec.Annotations[AnnotationUnclaimed] = "true" // chunk 0 speaks for the backup (wholeBackup)
		}
		existed, err := c.put(ctx, sec, unclaimed)
		if err != nil {
			return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: write secret %s/%s: %w", key, c.namespace, sec.Name, err)
		}
		replaced = replaced || existed
		ref.Secrets = append(ref.Secrets, sec.Name)
		if c.AfterChunkWritten != nil {
			c.AfterChunkWritten(key, i)
		}
	}
	if err := c.readBack(ctx, ref, chunks); err != nil {
		return v1alpha1.BackupRef{}, fmt.Errorf("save backup of %s: read back: %w", key, err)
	}
	// Every Save of a key writes its chunk 0: when none was there, no
	// earlier Save left chunks to clean up, and the listing is skipped.
	if !replaced {
		return ref, nil
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

// put creates the Secret or replaces the one of the same name, and says
// whether there was one. It creates first: a backup's Secrets are new but
// for a Save repeated after a crash. An unclaimed backup never replaces a
// claimed one's chunk 0: that one may be the backup a stage began with.
func (c *Client) put(ctx context.Context, sec *corev1.Secret, unclaimed bool) (existed bool, err error) {
	api := c.secrets.CoreV1().Secrets(c.namespace)
	again := func(err error) bool {
		return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || retriable(err)
	}
	err = c.retryIf(ctx, again, func() error {
		_, err := api.Create(ctx, sec, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		existed = true
		cur, err := api.Get(ctx, sec.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return apierrors.NewConflict(corev1.Resource("secrets"), sec.Name, err) // deleted meanwhile: create again
		}
		if err != nil {
			return err
		}
		if cur.Type != SecretType {
			return permanent{fmt.Errorf("a Secret of type %q has this name", cur.Type)}
		}
		if unclaimed && strings.HasPrefix(cur.Annotations[AnnotationChunk], "0/") && cur.Annotations[AnnotationUnclaimed] == "" {
			return permanent{fmt.Errorf("it holds a claimed backup, which only a Save of its stage may replace")}
		}
		next := sec.DeepCopy()
		next.ResourceVersion = cur.ResourceVersion
		_, err = api.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
	return existed, err
}

// NamespaceReady tells the client its namespace was found or created by
// another client of the same process (the run store's, in the same
// namespace), so its first backup need not ask again.
func (c *Client) NamespaceReady() { c.namespaceSeen.Store(true) }

// ensureNamespace creates the backup namespace when it is missing; a
// client that may not read namespaces goes on and lets the writes tell.
func (c *Client) ensureNamespace(ctx context.Context) error {
	if c.namespaceSeen.Load() {
		return nil // once per Client: a namespace removed mid-run fails the writes loudly anyway
	}
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
	c.namespaceSeen.Store(true)
	return nil
}

// readBack reads every chunk Secret Save wrote, checks each as Load does
// (its place in the snapshot, its checksum) and that it holds the bytes
// written. The bytes were packed from the snapshot whose checksum ref
// carries, so equal bytes prove the backup loads; unpacking and decoding
// it again would prove nothing more and cost a stage's time.
func (c *Client) readBack(ctx context.Context, ref v1alpha1.BackupRef, written [][]byte) error {
	for i, name := range ref.Secrets {
		got, err := c.readChunk(ctx, ref, i, name)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, written[i]) {
			return &CorruptError{Secrets: []string{c.namespace + "/" + name}, Problem: fmt.Sprintf("chunk %d of %d: holds other bytes than were written", i, len(ref.Secrets))}
		}
	}
	return nil
}
