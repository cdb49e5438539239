// Command image builds Upshift's container image without Docker and
// without a registry, reproducibly, as an OCI image layout in a tar file
// (`make image` writes bin/upshift-image.tar):
//
//	one layer on an empty image: the static binary at /upshift (the
//	entrypoint), the build machine's CA certificates (so sources over
//	HTTPS verify), /etc/passwd and /etc/group naming user 65532, who runs
//	it; every timestamp is SOURCE_DATE_EPOCH, every owner fixed.
//
// Why not ko: ko (github.com/google/ko) resolves its base image from a
// registry, or from a Docker daemon for ko.local/ names, and neither is
// reachable where Upshift is built and tested; its on-disk base cache
// (KOCACHE) is filled only by pulls. It also puts the binary under
// /ko-app and brings no CA certificates of its own. This program uses
// go-containerregistry, the library ko is built on, with no base at all.
//
// Load the result with `skopeo copy oci-archive:bin/upshift-image.tar
// docker://REGISTRY/upshift:TAG`, `podman load -i`, `docker load -i`
// (Docker 25 or newer) or `ctr image import`.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

func main() {
	o := options{}
	flag.StringVar(&o.Binary, "binary", "", "the static Linux binary to run as /upshift (required)")
	flag.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to copy to /etc/ssl/certs/ca-certificates.crt")
	flag.StringVar(&o.Repository, "repository", "ghcr.io/upshift-dev/upshift", "the image's repository, recorded in the layout's index")
	flag.StringVar(&o.Version, "version", "", "the image's tag and its org.opencontainers.image.version label (required)")
	flag.StringVar(&o.Revision, "revision", "", "the source revision (org.opencontainers.image.revision), if known")
	flag.StringVar(&o.Source, "source", "https://github.com/upshift-dev/upshift", "org.opencontainers.image.source")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "the binary's architecture (GOARCH)")
	out := flag.String("out", "bin/upshift-image.tar", "where to write the OCI layout tar")
	flag.Parse()

	epoch, err := sourceDateEpoch()
	if err != nil {
		fail(err)
	}
	o.Created = epoch
	img, err := build(o)
	if err != nil {
		fail(err)
	}
	digest, size, err := writeFile(*out, img, o.Repository+":"+o.Version, o.Version)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s: %s:%s %s (%.1f MB)\n", *out, o.Repository, o.Version, digest, float64(size)/1e6)
}

// sourceDateEpoch is every timestamp of the image: SOURCE_DATE_EPOCH
// (seconds since 1970, https://reproducible-builds.org), else 1970.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970 (e.g. git log -1 --format=%%ct)", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}
