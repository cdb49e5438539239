package chunks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
)

// Annotations of a chunk Secret: which chunk of how many, and checksums,
// so a reader can tell which Secret is altered.
const (
	AnnotationChunk       = "upshift.dev/chunk"
	AnnotationChunkSHA256 = "upshift.dev/chunk-sha256"
	AnnotationBlobSHA256  = "upshift.dev/blob-sha256"
	dataKey               = "chunk"
	// digestInName is how much of the blob's digest a chunk's name
	// carries: 80 bits tell blobs of one owner apart.
	digestInName = 20
)

// ErrCorrupt matches every *CorruptError.
var ErrCorrupt = errors.New("stored blob is corrupt")

// CorruptError names the chunk Secret that is missing or altered.
type CorruptError struct {
	Secret  string // namespace/name; empty for a problem of the whole blob
	Problem string
}

func (e *CorruptError) Error() string {
	if e.Secret == "" {
		return fmt.Sprintf("%v: %s", ErrCorrupt, e.Problem)
	}
	return fmt.Sprintf("%v: secret %s: %s", ErrCorrupt, e.Secret, e.Problem)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Store writes and reads blobs as Secrets of one type in one namespace.
type Store struct {
	cs         kubernetes.Interface
	namespace  string
	secretType corev1.SecretType
}

// New returns a Store.
func New(cs kubernetes.Interface, namespace string, secretType corev1.SecretType) *Store {
	return &Store{cs: cs, namespace: namespace, secretType: secretType}
}

// Name is the name of the index-th chunk of a blob with digest sha under
// prefix. prefix must leave room for the digest and the index (a Secret's
// name has at most 253 characters).
func Name(prefix, sha string, index int) string {
	return fmt.Sprintf("%s-%s-%d", prefix, sha[:digestInName], index)
}

// Write keeps raw as chunk Secrets named from prefix and raw's digest,
// labelled with labels, then reads them back and verifies them. Chunks
// already there with the same content are kept as they are.
func (s *Store) Write(ctx context.Context, prefix string, labels map[string]string, raw []byte) (v1alpha1.BlobRef, error) {
	b, err := Prepare(raw)
	if err != nil {
		return v1alpha1.BlobRef{}, err
	}
	return s.WriteBlob(ctx, prefix, labels, b)
}

// Blob is a blob packed, cut and checksummed, ready to write: Prepare is
// CPU alone, so a caller can do it while it waits on the network.
type Blob struct {
	ref    v1alpha1.BlobRef
	pieces [][]byte
}

// Prepare packs raw and cuts it into chunks.
func Prepare(raw []byte) (*Blob, error) {
	packed, err := Pack(raw)
	if err != nil {
		return nil, err
	}
	return &Blob{
		ref:    v1alpha1.BlobRef{SHA256: SHA256Hex(raw), Bytes: int64(len(raw)), Packed: int64(len(packed))},
		pieces: Split(packed, Size),
	}, nil
}

// WriteBlob writes a prepared blob as Write does.
func (s *Store) WriteBlob(ctx context.Context, prefix string, labels map[string]string, b *Blob) (v1alpha1.BlobRef, error) {
	ref, pieces := b.ref, b.pieces
	ref.Secrets = nil
	immutable := true
	for i, piece := range pieces {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      Name(prefix, ref.SHA256, i),
				Namespace: s.namespace,
				Labels:    labels,
				Annotations: map[string]string{
					AnnotationChunk:       fmt.Sprintf("%d/%d", i, len(pieces)),
					AnnotationChunkSHA256: SHA256Hex(piece),
					AnnotationBlobSHA256:  ref.SHA256,
				},
			},
			Type:      s.secretType,
			Immutable: &immutable,
			Data:      map[string][]byte{dataKey: piece},
		}
		if err := s.create(ctx, sec); err != nil {
			return v1alpha1.BlobRef{}, fmt.Errorf("write secret %s/%s: %w", s.namespace, sec.Name, err)
		}
		ref.Secrets = append(ref.Secrets, sec.Name)
	}
	if err := s.readBack(ctx, ref, pieces); err != nil {
		return v1alpha1.BlobRef{}, fmt.Errorf("read back: %w", err)
	}
	return ref, nil
}

// create creates sec. One of the same name with the same content is
// taken as written (a retry, or a resumed run); one with other content
// (a chunk altered by hand) is replaced, since an immutable Secret cannot
// be updated.
func (s *Store) create(ctx context.Context, sec *corev1.Secret) error {
	api := s.cs.CoreV1().Secrets(s.namespace)
	return retry(ctx, func() error {
		_, err := api.Create(ctx, sec, metav1.CreateOptions{FieldManager: kube.FieldManager})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		cur, err := api.Get(ctx, sec.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Type == sec.Type && bytes.Equal(cur.Data[dataKey], sec.Data[dataKey]) {
			return nil
		}
		if cur.Type != sec.Type {
			return fmt.Errorf("a Secret of type %q has this name: delete or rename it", cur.Type)
		}
		uid := cur.UID
		if err := api.Delete(ctx, sec.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return apierrors.NewConflict(corev1.Resource("secrets"), sec.Name, errors.New("replaced an altered chunk")) // create again
	})
}

// Read reads a blob's chunks and verifies each chunk and the whole. A
// missing chunk or a mismatch is a *CorruptError naming the Secret.
func (s *Store) Read(ctx context.Context, ref v1alpha1.BlobRef) ([]byte, error) {
	if len(ref.Secrets) == 0 {
		return nil, &CorruptError{Problem: "the ref names no Secret"}
	}
	var packed []byte
	for i, name := range ref.Secrets {
		piece, err := s.readChunk(ctx, ref, i, name)
		if err != nil {
			return nil, err
		}
		packed = append(packed, piece...)
	}
	raw, err := Unpack(packed)
	if err != nil {
		return nil, &CorruptError{Problem: fmt.Sprintf("decompress %s: %v", strings.Join(ref.Secrets, ", "), err)}
	}
	if got := SHA256Hex(raw); got != ref.SHA256 {
		return nil, &CorruptError{Problem: fmt.Sprintf("the blob in %s has sha256 %s, its ref says %s", strings.Join(ref.Secrets, ", "), got, ref.SHA256)}
	}
	return raw, nil
}

// readBack reads every chunk Secret Write wrote, checks each as Read does
// and that it holds the bytes written: packed from the blob whose digest
// the ref carries, so equal bytes prove the blob reads back whole without
// decompressing it again.
func (s *Store) readBack(ctx context.Context, ref v1alpha1.BlobRef, written [][]byte) error {
	for i, name := range ref.Secrets {
		got, err := s.readChunk(ctx, ref, i, name)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, written[i]) {
			return &CorruptError{Secret: s.namespace + "/" + name, Problem: fmt.Sprintf("chunk %d of %d holds other bytes than were written", i, len(ref.Secrets))}
		}
	}
	return nil
}

func (s *Store) readChunk(ctx context.Context, ref v1alpha1.BlobRef, index int, name string) ([]byte, error) {
	id := s.namespace + "/" + name
	var sec *corev1.Secret
	err := retry(ctx, func() error {
		var err error
		sec, err = s.cs.CoreV1().Secrets(s.namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil, &CorruptError{Secret: id, Problem: fmt.Sprintf("chunk %d of %d is missing", index, len(ref.Secrets))}
	case err != nil:
		return nil, fmt.Errorf("read secret %s: %w", id, err)
	}
	want := fmt.Sprintf("%d/%d", index, len(ref.Secrets))
	if got := sec.Annotations[AnnotationChunk]; got != want || sec.Annotations[AnnotationBlobSHA256] != ref.SHA256 {
		return nil, &CorruptError{Secret: id, Problem: fmt.Sprintf("is chunk %q of blob %s, want chunk %s of blob %s", got, sec.Annotations[AnnotationBlobSHA256], want, ref.SHA256)}
	}
	piece := sec.Data[dataKey]
	if got := SHA256Hex(piece); got != sec.Annotations[AnnotationChunkSHA256] {
		return nil, &CorruptError{Secret: id, Problem: fmt.Sprintf("chunk %s has sha256 %s, its annotation says %s", want, got, sec.Annotations[AnnotationChunkSHA256])}
	}
	return piece, nil
}

// DeleteAll deletes every chunk Secret the label selector matches. It
// lists and deletes one by one rather than with a delete-collection, so
// it needs no permission beyond the list and delete a run needs anyway.
func (s *Store) DeleteAll(ctx context.Context, selector string) error {
	api := s.cs.CoreV1().Secrets(s.namespace)
	var list *corev1.SecretList
	err := retry(ctx, func() error {
		var err error
		list, err = api.List(ctx, metav1.ListOptions{LabelSelector: selector, FieldSelector: "type=" + string(s.secretType)})
		return err
	})
	if err != nil {
		return fmt.Errorf("list secrets %s in %s: %w", selector, s.namespace, err)
	}
	for _, sec := range list.Items {
		err := retry(ctx, func() error { return api.Delete(ctx, sec.Name, metav1.DeleteOptions{}) })
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete secret %s/%s: %w", s.namespace, sec.Name, err)
		}
	}
	return nil
}

// backoff spaces the retries of a transient error. kube.Retry ends it
// where the next step would pass Cap: four tries, about 1.4s in all.
var backoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 3 * time.Second}

// retry runs call until it succeeds, fails for good, the backoff is spent
// or ctx ends (see kube.Retry). A conflict is retried: create uses it to
// say "try again".
func retry(ctx context.Context, call func() error) error {
	return kube.Retry(ctx, backoff, again, func(int) error { return call() })
}

func again(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	return kube.Transient(err) && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
