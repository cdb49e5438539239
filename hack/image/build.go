package main

import (
	"compress/gzip"
	"errors"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// options describe the image to build.
type options struct {
	Binary     string    // path of the static binary
	CACerts    string    // path of the CA bundle
	Repository string    // e.g. ghcr.io/upshift-dev/upshift
	Version    string    // tag and version label
	Revision   string    // VCS revision label, optional
	Source     string    // source label
	Arch       string    // GOARCH of the binary
	Created    time.Time // every timestamp
}

const (
	// uid and gid of the user that runs the binary (distroless' nonroot).
	nonRoot = 65532
	// entrypoint is where the binary lives.
	entrypoint = "/upshift"
	// caPath is where Go's crypto/x509 looks first on Linux.
	caPath = "/etc/ssl/certs/ca-certificates.crt"
)

// build makes the image: one layer (rootfs) on an empty OCI image, its
// config naming the entrypoint, the user, the labels, and o.Created as
// every time.
func build(o options) (v1.Image, error) {
	switch {
	case o.Binary == "":
		return nil, errors.New("-binary: name the static Linux binary to put at /upshift (make image builds bin/image/upshift)")
	case o.Version == "":
		return nil, errors.New("-version: give the image's tag, e.g. -version 0.1.0")
	case o.Arch == "":
		return nil, errors.New("-arch: give the binary's GOARCH, e.g. -arch amd64")
	}
	files, err := rootfs(o)
	if err != nil {
		return nil, err
	}
	tarBytes, err := tarFiles(files, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(bytesOpener(tarBytes),
		tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	created := v1.Time{Time: o.Created}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "hack/image: /upshift, CA certificates, user 65532", Comment: "upshift " + o.Version},
	})
	if err != nil {
		return nil, fmt.Errorf("append the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", o.Arch, created
	labels := map[string]string{
		"org.opencontainers.image.source":  o.Source,
		"org.opencontainers.image.version": o.Version,
		"org.opencontainers.image.title":   "upshift",
		"org.opencontainers.image.created": o.Created.Format(time.RFC3339),
	}
	if o.Revision != "" {
		labels["org.opencontainers.image.revision"] = o.Revision
	}
	cf.Config = v1.Config{
		Entrypoint: []string{entrypoint},
		User:       fmt.Sprintf("%d:%d", nonRoot, nonRoot),
		WorkingDir: "/",
		Env:        []string{"PATH=/", "SSL_CERT_FILE=" + caPath},
		Labels:     labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	// The same labels on the manifest, where registries show them.
	annotated, ok := mutate.Annotations(img, labels).(v1.Image)
	if !ok {
		return nil, errors.New("annotate the manifest: not an image")
	}
	return annotated, nil
}
