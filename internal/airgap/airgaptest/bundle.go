package airgaptest

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Bundle is a test bundle's OCI layout, before it is packed: what it
// holds by repository:tag (each one's manifest or index digest).
type Bundle struct {
	Dir     string
	Digests map[string]string
}

// Layout writes an OCI layout of images (random layers), one image index
// and one Helm chart (an OCI artifact), each annotated with its
// repository:tag, as skopeo and crane write one.
func Layout(t testing.TB, images ...string) *Bundle {
	t.Helper()
	b := &Bundle{Dir: t.TempDir(), Digests: map[string]string{}}
	p, err := layout.Write(b.Dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	add := func(ref string, digest func() (v1.Hash, error), appendTo func(layout.Option) error) {
		d, err := digest()
		if err == nil {
			err = appendTo(layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Digests[ref] = d.String()
	}
	for _, ref := range images {
		img, err := random.Image(512, 2)
		if err != nil {
			t.Fatal(err)
		}
		add(ref, img.Digest, func(o layout.Option) error { return p.AppendImage(img, o) })
	}
	idx, err := random.Index(256, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	add("embedded-cluster/multiarch:1.0.0", idx.Digest, func(o layout.Option) error { return p.AppendIndex(idx, o) })
	chart := helmChart(t)
	add("embedded-cluster/charts/web:1.2.0", chart.Digest, func(o layout.Option) error { return p.AppendImage(chart, o) })
	return b
}

// helmChart is a Helm chart as helm push stores it: an OCI manifest with
// Helm's config and content media types.
func helmChart(t testing.TB) v1.Image {
	t.Helper()
	layer := static.NewLayer([]byte("a chart's .tgz"), "application/vnd.cncf.helm.chart.content.v1.tar+gzip")
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	return mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json")
}

// Blobs are the layout's blob files, their paths by digest.
func (b *Bundle) Blobs(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(filepath.Join(b.Dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out["sha256:"+e.Name()] = filepath.Join(b.Dir, "blobs", "sha256", e.Name())
	}
	return out
}

// Pack writes the layout as a .tar, or a .tar.gz when file ends so.
func (b *Bundle) Pack(t testing.TB, file string) string {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	var w io.WriteCloser = nopCloser{f}
	if strings.HasSuffix(file, ".gz") {
		w = gzip.NewWriter(f)
	}
	tw := tar.NewWriter(w)
	var files []string
	err = filepath.Walk(b.Dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, path := range files {
		rel, _ := filepath.Rel(b.Dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []io.Closer{tw, w, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
