package backup

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Info describes one key's backup, from its Secrets' metadata.
type Info struct {
	Key Key `json:"key"`
	// Secrets are the chunk Secrets' names, in chunk order.
	Secrets   []string  `json:"secrets"`
	Objects   int       `json:"objects"`
	Absent    int       `json:"absent,omitempty"`
	Bytes     int       `json:"bytes"` // compressed, over all chunks
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"createdAt"`
	// Unclaimed: saved before its stage's turn and never claimed for it
	// (Client.SaveUnclaimed); no stage began with it.
	Unclaimed bool `json:"unclaimed,omitempty"`
}

// chunkMeta is what a backup Secret's metadata says about it.
type chunkMeta struct {
	name  string
	key   Key
	index int
	meta  metav1.ObjectMeta
}

// listChunks lists the backup Secrets that match the label selector,
// reading metadata only (a chunk's data is up to 900 KiB).
func (c *Client) listChunks(ctx context.Context, selector map[string]string) ([]chunkMeta, error) {
	opts := metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(SecretType)).String(),
		LabelSelector: labels.SelectorFromSet(selector).String(),
	}
	if len(selector) == 0 {
		opts.LabelSelector = LabelRun // exists
	}
	var out []chunkMeta
	err := c.retry(ctx, func() error {
		out = nil
		list, err := c.metadata.Resource(secretsResource).Namespace(c.namespace).List(ctx, opts)
		if err != nil {
			return err
		}
		for _, item := range list.Items {
			k, ok := keyOf(item.Annotations)
			if !ok {
				continue // not one of ours
			}
			index, _, _ := strings.Cut(item.Annotations[AnnotationChunk], "/")
			i, err := strconv.Atoi(index)
			if err != nil {
				i = -1
			}
			out = append(out, chunkMeta{name: item.Name, key: k, index: i, meta: item.ObjectMeta})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list backup secrets in %s: %w", c.namespace, err)
	}
	return out, nil
}

// List returns one Info per backup key in the namespace, oldest first.
func (c *Client) List(ctx context.Context) ([]Info, error) {
	chunks, err := c.listChunks(ctx, nil)
	if err != nil {
		return nil, err
	}
	sort.Slice(chunks, func(i, j int) bool { return chunks[i].index < chunks[j].index })
	byKey := map[Key]*Info{}
	var infos []*Info
	for _, ch := range chunks {
		info := byKey[ch.key]
		if info == nil {
			a := ch.meta.Annotations
			info = &Info{Key: ch.key, SHA256: a[AnnotationSnapshotSHA256], CreatedAt: ch.meta.CreationTimestamp.UTC()}
			info.Objects, _ = strconv.Atoi(a[AnnotationObjects])
			info.Absent, _ = strconv.Atoi(a[AnnotationAbsent])
			if t, err := time.Parse(time.RFC3339, a[AnnotationCreatedAt]); err == nil {
				info.CreatedAt = t.UTC()
			}
			byKey[ch.key] = info
			infos = append(infos, info)
		}
		info.Secrets = append(info.Secrets, ch.name)
		if ch.index == 0 && ch.meta.Annotations[AnnotationUnclaimed] != "" {
			info.Unclaimed = true
		}
		n, _ := strconv.Atoi(ch.meta.Annotations[AnnotationChunkBytes])
		info.Bytes += n
	}
	sort.Slice(infos, func(i, j int) bool {
		a, b := infos[i], infos[j]
		switch {
		case !a.CreatedAt.Equal(b.CreatedAt):
			return a.CreatedAt.Before(b.CreatedAt)
		case a.Key.Run != b.Key.Run:
			return a.Key.Run < b.Key.Run
		case a.Key.Stage != b.Key.Stage:
			return a.Key.Stage < b.Key.Stage
		}
		return a.Key.Attempt < b.Key.Attempt
	})
	out := make([]Info, len(infos))
	for i, info := range infos {
		out[i] = *info
	}
	return out, nil
}

// DeleteRun deletes every backup Secret of a run.
func (c *Client) DeleteRun(ctx context.Context, run string) error {
	err := c.deleteSecrets(ctx, map[string]string{LabelRun: labelValue(run)}, func(k Key, _ string) bool { return k.Run == run })
	if err != nil {
		return fmt.Errorf("delete backups of run %s: %w", run, err)
	}
	return nil
}

// deleteSecrets deletes the backup Secrets that match the labels and that
// doomed picks (labels may be shortened with a hash, so keys are checked).
func (c *Client) deleteSecrets(ctx context.Context, selector map[string]string, doomed func(k Key, name string) bool) error {
	chunks, err := c.listChunks(ctx, selector)
	if err != nil {
		return err
	}
	api := c.secrets.CoreV1().Secrets(c.namespace)
	for _, ch := range chunks {
		if !doomed(ch.key, ch.name) {
			continue
		}
		uid := ch.meta.UID
		err := c.retry(ctx, func() error {
			return api.Delete(ctx, ch.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete secret %s/%s: %w", c.namespace, ch.name, err)
		}
	}
	return nil
}
