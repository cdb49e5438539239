package image

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// runsImage tells whether a container status shows the wanted image. Runtimes
// report references normalized ("nginx:1.27" runs as
// "docker.io/library/nginx:1.27"), and a reference by digest may come back
// as a tag, so a digest is also looked up in the image ID.
func runsImage(cs corev1.ContainerStatus, want string) bool {
	if normalizeImage(cs.Image) == normalizeImage(want) {
		return true
	}
	if _, digest, ok := strings.Cut(want, "@"); ok {
		return strings.HasSuffix(cs.ImageID, "@"+digest) || cs.ImageID == digest || strings.HasSuffix(cs.Image, "@"+digest)
	}
	return false
}

// normalizeImage expands a reference the way container runtimes report
// it: docker.io when no registry is named, library/ for Docker Hub's
// official images, :latest without tag or digest.
func normalizeImage(ref string) string {
	name, digest, _ := strings.Cut(ref, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	domain, path := "docker.io", name
	if first, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		domain, path = first, rest
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	out := domain + "/" + path
	if tag == "" && digest == "" {
		tag = "latest"
	}
	if tag != "" {
		out += ":" + tag
	}
	if digest != "" {
		out += "@" + digest
	}
	return out
}
