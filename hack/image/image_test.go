package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// staticBinary builds a small static Linux program to stand for upshift.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"hi\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hi\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hi")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func testOptions(t *testing.T) options {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return options{
		Binary: staticBinary(t), CACerts: ca, Repository: "example.com/upshift", Version: "1.2.3",
		Revision: "abc", Source: "https://example.com/upshift", Arch: "amd64",
		Created: time.Unix(1700000000, 0).UTC(),
	}
}

// write builds o and writes its layout tar, returning the tar's bytes and
// the manifest's digest.
func write(t *testing.T, o options) ([]byte, string) {
	t.Helper()
	img, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "image.tar")
	digest, _, err := writeFile(path, img, o.Repository+":"+o.Version, o.Version)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, digest
}

// The same inputs make the same bytes; another time makes another digest.
func TestBuildIsReproducible(t *testing.T) {
	o := testOptions(t)
	a, da := write(t, o)
	b, db := write(t, o)
	if da != db || !bytes.Equal(a, b) {
		t.Errorf("two builds of the same inputs differ: %s and %s", da, db)
	}
	o.Created = o.Created.Add(time.Second)
	if _, dc := write(t, o); dc == da {
		t.Errorf("another SOURCE_DATE_EPOCH made the same digest %s: are the times in the image?", dc)
	}
}

// The tar is an OCI image layout that go-containerregistry reads back and
// validates (every digest and size checked), with the config and the
// files the controller needs.
func TestImageLayoutAndContents(t *testing.T) {
	o := testOptions(t)
	tarBytes, digest := write(t, o)
	img := readImage(t, tarBytes)
	if d, err := img.Digest(); err != nil || d.String() != digest {
		t.Errorf("the layout's image is %s (%v), want %s", d, err, digest)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image does not validate: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	switch {
	case !slices.Equal(c.Entrypoint, []string{"/upshift"}):
		t.Errorf("entrypoint %q, want /upshift", c.Entrypoint)
	case c.User != "65532:65532":
		t.Errorf("user %q, want 65532:65532", c.User)
	case c.Labels["org.opencontainers.image.source"] != o.Source || c.Labels["org.opencontainers.image.version"] != "1.2.3" || c.Labels["org.opencontainers.image.revision"] != "abc":
		t.Errorf("labels %v: want source, version and revision", c.Labels)
	case cf.OS != "linux" || cf.Architecture != "amd64":
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	case !cf.Created.Time.Equal(o.Created):
		t.Errorf("created %s, want %s", cf.Created, o.Created)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Annotations["org.opencontainers.image.source"] != o.Source || m.MediaType != "application/vnd.oci.image.manifest.v1+json" || len(m.Layers) != 1 {
		t.Errorf("manifest %+v: want an OCI manifest of one layer, annotated with the source", m)
	}

	files := layerFiles(t, img, o.Created)
	bin, _ := os.ReadFile(o.Binary)
	ca, _ := os.ReadFile(o.CACerts)
	for name, want := range map[string]struct {
		mode int64
		data []byte
	}{
		"upshift":                           {0o755, bin},
		"etc/ssl/certs/ca-certificates.crt": {0o644, ca},
	} {
		f, ok := files[name]
		if !ok {
			t.Errorf("no /%s in the layer", name)
			continue
		}
		if f.mode != want.mode || !bytes.Equal(f.data, want.data) {
			t.Errorf("/%s: mode %o, %d bytes; want %o and the source's %d bytes", name, f.mode, len(f.data), want.mode, len(want.data))
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), ":65532:65532:") {
		t.Errorf("/etc/passwd names no user 65532:\n%s", files["etc/passwd"].data)
	}
}

func TestBuildRefuses(t *testing.T) {
	o := testOptions(t)
	dynamic := o
	dynamic.Binary = "/bin/sh" // dynamically linked on every Linux distribution with a C library
	if _, err := build(dynamic); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamic binary: %v; want a refusal naming CGO_ENABLED=0", err)
	}
	script := o
	script.Binary = o.CACerts
	if _, err := build(script); err == nil || !strings.Contains(err.Error(), "GOOS=linux") {
		t.Errorf("not an executable: %v; want a refusal naming GOOS=linux", err)
	}
	noCA := o
	noCA.CACerts = filepath.Join(t.TempDir(), "none")
	if _, err := build(noCA); err == nil || !strings.Contains(err.Error(), "-ca-certs") {
		t.Errorf("no CA bundle: %v; want a refusal naming -ca-certs", err)
	}
	noVersion := o
	noVersion.Version = ""
	if _, err := build(noVersion); err == nil || !strings.Contains(err.Error(), "-version") {
		t.Errorf("no version: %v; want a refusal naming -version", err)
	}
}

// `make image` twice, into two files: the same digest, the same bytes.
// It builds upshift as the Makefile does (static, -trimpath, no build
// ID), so it takes minutes on a cold build cache: skipped by -short.
func TestMakeImageIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds upshift's static binary (about 2 minutes on a cold build cache, 20 s warm)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not on PATH (the README's requirements name it): install it, e.g. apt-get install -y make")
	}
	dir := t.TempDir()
	digestOf := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	var digests, sums []string
	for _, n := range []string{"a", "b"} {
		start := time.Now()
		cmd := exec.Command("make", "--no-print-directory", "image",
			"IMAGE_TAR="+filepath.Join(dir, n+".tar"), "IMAGE_BIN="+filepath.Join(dir, n, "upshift"))
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make image: %v\n%s", err, out)
		}
		d := digestOf.FindString(string(out))
		if d == "" {
			t.Fatalf("make image printed no digest:\n%s", out)
		}
		b, err := os.ReadFile(filepath.Join(dir, n+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		digests, sums = append(digests, d), append(sums, hex.EncodeToString(sum[:]))
		t.Logf("build %s: %s, %.1f MB, in %s", n, d, float64(len(b))/1e6, time.Since(start).Round(100*time.Millisecond))
	}
	if digests[0] != digests[1] || sums[0] != sums[1] {
		t.Errorf("two `make image` of the same tree differ: digests %v, tar sha256 %v", digests, sums)
	}

	// The entrypoint runs (statically linked, nothing else needed).
	b, err := os.ReadFile(filepath.Join(dir, "a.tar"))
	if err != nil {
		t.Fatal(err)
	}
	img := readImage(t, b)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	f, ok := layerFiles(t, img, cf.Created.Time)["upshift"]
	if !ok {
		t.Fatal("no /upshift in the image")
	}
	bin := filepath.Join(dir, "entrypoint")
	if err := os.WriteFile(bin, f.data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "upshift ") {
		t.Errorf("/upshift version: %v\n%s", err, out)
	}
}

type entry struct {
	mode int64
	data []byte
}

// readImage reads the only image of an OCI layout tar, checking its index
// names it by tag and in full.
func readImage(t *testing.T, tarBytes []byte) v1.Image {
	t.Helper()
	p, err := layout.FromPath(untar(t, tarBytes))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" ||
		!strings.Contains(im.Manifests[0].Annotations["io.containerd.image.name"], ":") {
		t.Fatalf("index.json %+v: want one manifest, named by tag and in full", im.Manifests)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// layerFiles reads the image's only layer: name -> mode and content; every
// entry's time must be mtime.
func layerFiles(t *testing.T, img v1.Image, mtime time.Time) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(mtime) {
			t.Errorf("/%s: time %s, want SOURCE_DATE_EPOCH", h.Name, h.ModTime)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = entry{mode: h.Mode, data: b}
	}
}

// untar writes an OCI layout tar into a new directory.
func untar(t *testing.T, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
