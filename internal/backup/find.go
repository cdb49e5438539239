package backup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Find returns the ref of key's backup when one was saved whole (every
// chunk there, of one snapshot) and loads with its checksums, or nil when
// there is none or only part of one (a Save cut short: Save again). A
// whole backup that does not load is a *CorruptError: it may be the only
// copy of the objects before their stage, and is not written over.
//
// A resumed run asks, for each stage engine.Sought names, before it
// drives: the stage's steps may have started while the record of a backup
// taken before was being saved, so a new snapshot would hold their
// changes, and a rollback must restore it. The ref holds the Helm
// revisions the snapshot was taken with, as the record's would.
//
// Only a backup of the run whose UID is runUID is answered: a run
// re-created under the name of one whose backups were kept has keys of
// the same names.
func (c *Client) Find(ctx context.Context, key Key, runUID string) (*v1alpha1.BackupRef, error) {
	if err := key.validate(); err != nil {
		return nil, err
	}
	all, err := c.listChunks(ctx, key.labels())
	if err != nil {
		return nil, err
	}
	var chunks []chunkMeta
	for _, ch := range all {
		if ch.key == key {
			chunks = append(chunks, ch)
		}
	}
	ref, whole := wholeBackup(chunks)
	if !whole || unclaimed(chunks) {
		// An unclaimed backup was taken before its stage's turn, and no
		// stage began with it: a Save of the key writes over it.
		return nil, nil
	}
	snap, err := c.Load(ctx, *ref)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("read backup %s: %w", key, err)
	}
	if snap.RunUID != runUID {
		return nil, nil
	}
	ref.HelmReleases = snap.HelmReleases
	return ref, nil
}

// wholeBackup assembles the ref of chunks that are every chunk, in order,
// of one snapshot.
func wholeBackup(chunks []chunkMeta) (*v1alpha1.BackupRef, bool) {
	if len(chunks) == 0 {
		return nil, false
	}
	a := chunks[0].meta.Annotations
	ref := &v1alpha1.BackupRef{SHA256: a[AnnotationSnapshotSHA256], Secrets: make([]string, len(chunks))}
	ref.Objects, _ = strconv.Atoi(a[AnnotationObjects])
	ref.Absent, _ = strconv.Atoi(a[AnnotationAbsent])
	if t, err := time.Parse(time.RFC3339, a[AnnotationCreatedAt]); err == nil {
		at := metav1.NewTime(t.UTC())
		ref.CreatedAt = &at
	}
	for _, ch := range chunks {
		_, count, _ := strings.Cut(ch.meta.Annotations[AnnotationChunk], "/")
		if n, err := strconv.Atoi(count); err != nil || n != len(chunks) || ch.index < 0 || ch.index >= n ||
			ref.Secrets[ch.index] != "" || ch.meta.Annotations[AnnotationSnapshotSHA256] != ref.SHA256 {
			return nil, false
		}
		ref.Secrets[ch.index] = ch.name
	}
	return ref, true
}

// unclaimed tells whether the backup whose chunks these are was saved
// unclaimed (SaveUnclaimed) and never claimed: chunk 0 says.
func unclaimed(chunks []chunkMeta) bool {
	for _, ch := range chunks {
		if ch.index == 0 {
			return ch.meta.Annotations[AnnotationUnclaimed] != ""
		}
	}
	return false
}
