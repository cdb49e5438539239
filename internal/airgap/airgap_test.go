package airgap_test

import (
	"archive/tar"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/upshift-dev/upshift/internal/airgap"
	"github.com/upshift-dev/upshift/internal/airgap/airgaptest"
)

// A bundle (.tar.gz) is verified and pushed to a real registry on
// 127.0.0.1 over TLS: every image, the index and the Helm chart are
// there under their repository:tag with the bundle's digests, under the
// prefix; pushing again changes nothing.
func TestPushBundle(t *testing.T) {
	reg := airgaptest.StartRegistry(t)
	src := airgaptest.Layout(t, "embedded-cluster/coredns:1.12.0", "embedded-cluster/pause:3.10")
	b := open(t, src.Pack(t, filepath.Join(t.TempDir(), "bundle.tar.gz")))
	n, err := b.Verify(context.Background())
	if err != nil || n < 10 {
		t.Fatalf("verify: %d blobs, %v", n, err)
	}
	r, err := airgap.ParseRegistry(reg.Addr+"/mirror", "--airgap-registry")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := airgap.Options(context.Background(), r, reg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	if err := b.Push(r, opts, func(i int, m airgap.Manifest) { order = append(order, m.Ref) }); err != nil {
		t.Fatal(err)
	}
	if len(order) != len(src.Digests) {
		t.Errorf("pushed %q, want %d", order, len(src.Digests))
	}
	for ref, want := range src.Digests {
		if got := reg.Digest(t, "mirror/"+ref); got != want {
			t.Errorf("%s in the registry: %q, want %s", ref, got, want)
		}
	}
	if err := b.Push(r, opts, func(int, airgap.Manifest) {}); err != nil {
		t.Errorf("pushing again: %v", err)
	}
}

// The push is over https, never plain http, even to 127.0.0.1:
// without the CA the registry's certificate is not trusted, and a
// registry that speaks plain http gets no request (go-containerregistry
// alone would fall back to http there).
func TestPushIsHTTPS(t *testing.T) {
	reg := airgaptest.StartRegistry(t)
	b := open(t, airgaptest.Layout(t, "a/b:1").Pack(t, filepath.Join(t.TempDir(), "bundle.tar")))
	r, _ := airgap.ParseRegistry(reg.Addr, "--airgap-registry")
	opts, err := airgap.Options(context.Background(), r, "")
	if err != nil {
		t.Fatal(err)
	}
	err = b.Push(r, opts, func(int, airgap.Manifest) {})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("push without the registry's CA: %v, want a certificate error", err)
	}

	var plain atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { plain.Add(1) }))
	defer srv.Close()
	r, _ = airgap.ParseRegistry(strings.TrimPrefix(srv.URL, "http://"), "--airgap-registry")
	if opts, err = airgap.Options(context.Background(), r, ""); err != nil {
		t.Fatal(err)
	}
	if err := b.Push(r, opts, func(int, airgap.Manifest) {}); err == nil || plain.Load() != 0 {
		t.Errorf("push to a plain-http registry: %v, %d plain requests; want an error and none", err, plain.Load())
	}
}

// A corrupt blob, and a missing one, fail the verification naming the
// blob.
func TestVerifyNamesTheBadBlob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(path string) error
		says   string
	}{
		{"corrupt", func(p string) error { return os.WriteFile(p, []byte("not what was hashed"), 0o600) }, "is corrupt"},
		{"missing", os.Remove, "is missing from the bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := airgaptest.Layout(t, "a/b:1")
			var victim string
			for digest, path := range src.Blobs(t) {
				if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "{") { // a layer, not a manifest or config
					victim = digest
					if err := tc.break_(path); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			b := open(t, src.Pack(t, filepath.Join(t.TempDir(), "bundle.tar")))
			_, err := b.Verify(context.Background())
			if err == nil || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("verify with blob %s %s: %v", victim, tc.name, err)
			}
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry tar.Header
		body  string
		says  string
	}{
		{"escape", tar.Header{Name: "../evil", Typeflag: tar.TypeReg}, "x", "outside the layout"},
		{"symlink", tar.Header{Name: "blobs", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, "", "symbolic link"},
		{"no layout", tar.Header{Name: "README", Typeflag: tar.TypeReg}, "x", "not an OCI image layout"},
		{"no ref name", tar.Header{Name: "index.json", Typeflag: tar.TypeReg},
			`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:` + strings.Repeat("a", 64) + `","size":1}]}`,
			"has no org.opencontainers.image.ref.name annotation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bundle.tar")
			f, err := os.Create(file)
			if err != nil {
				t.Fatal(err)
			}
			tw := tar.NewWriter(f)
			for _, h := range []tar.Header{{Name: "oci-layout", Typeflag: tar.TypeReg, Size: 2}, tc.entry} {
				body := map[bool]string{true: "{}", false: tc.body}[h.Name == "oci-layout" && tc.name != "no layout"]
				if h.Name == "oci-layout" && tc.name == "no layout" {
					continue
				}
				h.Size, h.Mode = int64(len(body)), 0o644
				if h.Typeflag != tar.TypeReg {
					h.Size = 0
				}
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
				_, _ = tw.Write([]byte(body)[:h.Size])
			}
			tw.Close()
			f.Close()
			if _, err := airgap.Open(context.Background(), file, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("open: %v, want it to say %q", err, tc.says)
			}
		})
	}
}

func TestParseRegistry(t *testing.T) {
	for in, want := range map[string]string{"reg.example.com": "reg.example.com", "10.96.0.11:5000/mirror/ec": "10.96.0.11:5000/mirror/ec", "reg:5000/": "reg:5000"} {
		r, err := airgap.ParseRegistry(in, "--airgap-registry")
		if err != nil || r.String() != want {
			t.Errorf("%q: %v %v, want %s", in, r, err, want)
		}
	}
	for _, in := range []string{"", "https://reg.example.com", "reg/UPPER", "/prefix"} {
		if _, err := airgap.ParseRegistry(in, "--airgap-registry"); err == nil || !strings.Contains(err.Error(), "--airgap-registry") {
			t.Errorf("%q: %v, want an error naming the flag", in, err)
		}
	}
}

func open(t *testing.T, file string) *airgap.Bundle {
	t.Helper()
	b, err := airgap.Open(context.Background(), file, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}
