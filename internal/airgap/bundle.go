// Package airgap reads an airgap bundle and pushes it to a registry.
//
// A bundle is an OCI image layout (oci-layout, index.json,
// blobs/sha256/…) packed as a .tar or .tar.gz file, as skopeo, crane and
// oras write it. Each manifest of index.json is annotated
// org.opencontainers.image.ref.name with the repository:tag it is pushed
// to, relative to the registry (embedded-cluster/coredns:1.12.0); images,
// image indexes and OCI artifacts (Helm charts) alike.
package airgap

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"golang.org/x/sys/unix"
)

// RefNameAnnotation names the repository:tag a manifest is pushed to.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// Bundle is a bundle unpacked into a temporary directory; Close removes it.
type Bundle struct {
	dir    string
	layout layout.Path
	// Manifests are index.json's, in its order, each with its ref name.
	Manifests []Manifest
}

// Manifest is one entry of index.json: what is pushed, and where to.
type Manifest struct {
	Ref  string
	Desc v1.Descriptor
}

// Open unpacks the bundle file (.tar or .tar.gz) into a directory under
// tmp ("" is the system's) and reads its index. Only the layout's files
// are unpacked (oci-layout, index.json, blobs/sha256/…), each only when
// the file system has room for it. Nothing is verified yet: see Verify.
// A process killed while it unpacks leaves the directory
// (upshift-airgap-*) behind.
func Open(ctx context.Context, file, tmp string) (*Bundle, error) {
	dir, err := os.MkdirTemp(tmp, "upshift-airgap-*")
	if err != nil {
		return nil, fmt.Errorf("unpack the airgap bundle: %w", err)
	}
	b := &Bundle{dir: dir, layout: layout.Path(dir)}
	if err := unpack(ctx, file, dir); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.readIndex(); err != nil {
		b.Close()
		return nil, fmt.Errorf("airgap bundle %s: %w", file, err)
	}
	return b, nil
}

// Close removes the unpacked files.
func (b *Bundle) Close() error { return os.RemoveAll(b.dir) }

// readIndex reads index.json and checks every manifest names where it goes.
func (b *Bundle) readIndex() error {
	if _, err := os.Stat(filepath.Join(b.dir, "oci-layout")); err != nil {
		return errors.New("no oci-layout file at the top of the archive: it is not an OCI image layout (pack index.json, oci-layout and blobs/ at its root)")
	}
	raw, err := os.ReadFile(filepath.Join(b.dir, "index.json"))
	if err != nil {
		return errors.New("no index.json at the top of the archive: it is not an OCI image layout (pack index.json, oci-layout and blobs/ at its root)")
	}
	idx, err := v1.ParseIndexManifest(strings.NewReader(string(raw)))
	if err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	if len(idx.Manifests) == 0 {
		return errors.New("index.json lists no manifest: nothing to push")
	}
	seen := map[string]bool{}
	for _, d := range idx.Manifests {
		ref := d.Annotations[RefNameAnnotation]
		if ref == "" {
			return fmt.Errorf("manifest %s in index.json has no %s annotation: annotate it with the repository:tag it is pushed to", d.Digest, RefNameAnnotation)
		}
		if err := checkRef(ref); err != nil {
			return fmt.Errorf("manifest %s in index.json: %w", d.Digest, err)
		}
		if seen[ref] {
			return fmt.Errorf("index.json names %s twice: each manifest needs its own repository:tag", ref)
		}
		seen[ref] = true
		if !d.MediaType.IsImage() && !d.MediaType.IsIndex() {
			return fmt.Errorf("%s (manifest %s) has media type %q: only image manifests and indexes are pushed", ref, d.Digest, d.MediaType)
		}
		b.Manifests = append(b.Manifests, Manifest{Ref: ref, Desc: d})
	}
	return nil
}

// checkRef accepts repository:tag relative to a registry.
func checkRef(ref string) error {
	repo, tag, ok := strings.Cut(ref, ":")
	if !ok || strings.Contains(tag, "/") || strings.Contains(repo, "@") {
		return fmt.Errorf("%s %q is not a repository:tag (embedded-cluster/coredns:1.12.0)", RefNameAnnotation, ref)
	}
	if _, err := name.NewTag("registry.invalid/"+ref, name.StrictValidation); err != nil {
		return fmt.Errorf("%s %q is not a repository:tag (embedded-cluster/coredns:1.12.0): %v", RefNameAnnotation, ref, err)
	}
	return nil
}

// unpack extracts the archive's directories and regular files into dir,
// refusing any other kind of entry and any name that would leave dir.
func unpack(ctx context.Context, file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open the airgap bundle: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("airgap bundle %s: %w", file, err)
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("airgap bundle %s is not a .tar or .tar.gz file: %w", file, err)
		}
		if err := extract(tr, h, dir); err != nil {
			return fmt.Errorf("airgap bundle %s: %w", file, err)
		}
	}
}

func extract(tr *tar.Reader, h *tar.Header, dir string) error {
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(h.Name, "/")))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(h.Name) {
		if rel == "." && h.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("entry %q is outside the layout: refused", h.Name)
	}
	path := filepath.Join(dir, rel)
	switch h.Typeflag {
	case tar.TypeDir:
		return nil // made for the files in it
	case tar.TypeReg:
		if !layoutFile(filepath.ToSlash(rel)) {
			return nil // not the layout's: not unpacked
		}
		if err := roomFor(dir, h.Size); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		return out.Close()
	case tar.TypeXGlobalHeader:
		return nil
	}
	return fmt.Errorf("entry %q is a %s, not a file or directory: refused (an OCI layout holds files only)", h.Name, typeName(h.Typeflag))
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

// blobName is a blob's path in a layout.
var blobName = regexp.MustCompile(`^blobs/sha256/[0-9a-f]{64}$`)

// layoutFile says rel (slash-separated) is one of an OCI layout's files.
func layoutFile(rel string) bool {
	return rel == "oci-layout" || rel == "index.json" || blobName.MatchString(rel)
}

// spare is the room left free on the file system that unpacks a bundle.
const spare = 64 << 20

// roomFor refuses a file of size bytes the file system under dir cannot
// hold with spare bytes left.
func roomFor(dir string, size int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // cannot tell: the write says so if it fails
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if size > free-spare {
		return fmt.Errorf("%d bytes do not fit in the %d bytes free under %s: free space there, or set TMPDIR to a larger file system", size, free, dir)
	}
	return nil
}
