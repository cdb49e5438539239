package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// writeFile writes img as an OCI layout tar to path (atomically: a
// temporary file renamed) and returns the manifest's digest and the
// file's size.
func writeFile(path string, img v1.Image, name, tag string) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upshift-image-*.tar")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	digest, err := writeLayout(tmp, img, name, tag)
	if err != nil {
		tmp.Close()
		return "", 0, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", 0, err
	}
	st, err := tmp.Stat()
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return "", 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", 0, err
	}
	return digest.String(), st.Size(), nil
}

// writeLayout writes the OCI image layout of img (oci-layout, index.json,
// blobs/sha256/…) as a tar stream, in a fixed order with fixed times. The
// index names the image twice: by tag (org.opencontainers.image.ref.name,
// what skopeo and podman read) and in full (io.containerd.image.name,
// what containerd reads).
func writeLayout(w io.Writer, img v1.Image, name, tag string) (v1.Hash, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	indexJSON, err := imageIndex(img, manifest, digest, name, tag)
	if err != nil {
		return v1.Hash{}, err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return v1.Hash{}, err
	}

	tw := tar.NewWriter(w)
	if err := putFile(tw, "oci-layout", int64(len(`{"imageLayoutVersion":"1.0.0"}`)), bytes.NewReader([]byte(`{"imageLayoutVersion":"1.0.0"}`))); err != nil {
		return v1.Hash{}, err
	}
	if err := putFile(tw, "index.json", int64(len(indexJSON)), bytes.NewReader(indexJSON)); err != nil {
		return v1.Hash{}, err
	}
	if err := putDir(tw, "blobs/"); err != nil {
		return v1.Hash{}, err
	}
	if err := putDir(tw, "blobs/sha256/"); err != nil {
		return v1.Hash{}, err
	}
	if err := putFile(tw, blobPath(digest), int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return v1.Hash{}, err
	}
	if err := putFile(tw, blobPath(configDigest), int64(len(config)), bytes.NewReader(config)); err != nil {
		return v1.Hash{}, err
	}
	if err := putLayers(tw, img); err != nil {
		return v1.Hash{}, err
	}
	return digest, tw.Close()
}

// imageIndex is the layout's index.json: the one manifest of img, with
// its platform and both names.
func imageIndex(img v1.Image, manifest []byte, digest v1.Hash, name, tag string) ([]byte, error) {
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt,
			Size:      int64(len(manifest)),
			Digest:    digest,
			Platform:  &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": tag,
				"io.containerd.image.name":          name,
			},
		}},
	}
	return json.Marshal(index)
}

// putLayers writes img's compressed layers as blobs.
func putLayers(tw *tar.Writer, img v1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = putFile(tw, blobPath(d), size, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// layoutTime is the time of every entry of the layout tar: fixed, so the
// same image makes the same file.
var layoutTime = time.Unix(0, 0).UTC()

// putDir writes a directory entry.
func putDir(tw *tar.Writer, name string) error {
	return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: layoutTime, Format: tar.FormatPAX})
}

// putFile writes a file entry of size bytes read from r.
func putFile(tw *tar.Writer, name string, size int64, r io.Reader) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: layoutTime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	n, err := io.Copy(tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("%s: wrote %d bytes, want %d", name, n, size)
	}
	return err
}

// blobPath is where the layout keeps the blob of digest h.
func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
