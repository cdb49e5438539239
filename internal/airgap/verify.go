package airgap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Verify checks every blob of the layout against its name's digest and
// every blob a manifest names is there, with its size: a corrupt or
// missing blob is an error naming it, found before anything is pushed.
// It returns how many blobs it checked.
func (b *Bundle) Verify(ctx context.Context) (int, error) {
	sums, err := b.hashBlobs(ctx)
	if err != nil {
		return 0, err
	}
	w := walk{b: b, sizes: sums, seen: map[v1.Hash]bool{}}
	for _, m := range b.Manifests {
		if err := w.descriptor(m.Desc, m.Ref, ""); err != nil {
			return 0, err
		}
	}
	return len(sums), nil
}

// hashBlobs hashes every file under blobs/ and returns each one's size by
// digest; a file whose content is not its name is corrupt.
func (b *Bundle) hashBlobs(ctx context.Context) (map[v1.Hash]int64, error) {
	root := filepath.Join(b.dir, "blobs")
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the bundle's blobs/: %w", err)
	}
	sort.Strings(files)
	sizes := map[v1.Hash]int64{}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, path)
		alg, hexPart := filepath.Dir(rel), filepath.Base(rel)
		if alg != "sha256" {
			return nil, fmt.Errorf("blob blobs/%s: only sha256 digests are read", filepath.ToSlash(rel))
		}
		want := v1.Hash{Algorithm: alg, Hex: hexPart}
		got, size, err := sha256File(path)
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", want, err)
		}
		if got != hexPart {
			return nil, fmt.Errorf("blob %s is corrupt: its content's digest is sha256:%s; nothing was pushed", want, got)
		}
		sizes[want] = size
	}
	return sizes, nil
}

func sha256File(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// walk follows the manifests to every blob they name.
type walk struct {
	b     *Bundle
	sizes map[v1.Hash]int64
	seen  map[v1.Hash]bool
}

// descriptor checks d's blob is there with its size and, for a manifest
// or an index, what it names in turn; ref says whose blob it is, role
// what it is to it ("config", "layer"; "" for a manifest or an index).
func (w *walk) descriptor(d v1.Descriptor, ref, role string) error {
	if w.seen[d.Digest] {
		return nil
	}
	w.seen[d.Digest] = true
	size, ok := w.sizes[d.Digest]
	switch {
	case !ok && !d.MediaType.IsDistributable():
		return nil // a foreign layer: pulled from its URLs, never pushed
	case !ok:
		return fmt.Errorf("blob %s (%s of %s) is missing from the bundle; nothing was pushed", d.Digest, kind(d, role), ref)
	case size != d.Size:
		return fmt.Errorf("blob %s (%s of %s) is %d bytes, its descriptor says %d; nothing was pushed", d.Digest, kind(d, role), ref, size, d.Size)
	}
	switch {
	case role == "" && d.MediaType.IsIndex():
		idx, err := w.b.readIndexManifest(d.Digest)
		if err != nil {
			return fmt.Errorf("index %s of %s: %w", d.Digest, ref, err)
		}
		for _, c := range idx.Manifests {
			if err := w.descriptor(c, ref, ""); err != nil {
				return err
			}
		}
	case role == "" && d.MediaType.IsImage():
		m, err := w.b.readManifest(d.Digest)
		if err != nil {
			return fmt.Errorf("manifest %s of %s: %w", d.Digest, ref, err)
		}
		if err := w.descriptor(m.Config, ref, "config"); err != nil {
			return err
		}
		for _, l := range m.Layers {
			if err := w.descriptor(l, ref, "layer"); err != nil {
				return err
			}
		}
	}
	return nil
}

func kind(d v1.Descriptor, role string) string {
	switch {
	case role != "":
		return role
	case d.MediaType.IsIndex():
		return "index"
	}
	return "manifest"
}

func (b *Bundle) readManifest(h v1.Hash) (*v1.Manifest, error) {
	f, err := b.layout.Blob(h)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return v1.ParseManifest(f)
}

func (b *Bundle) readIndexManifest(h v1.Hash) (*v1.IndexManifest, error) {
	f, err := b.layout.Blob(h)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return v1.ParseIndexManifest(f)
}
