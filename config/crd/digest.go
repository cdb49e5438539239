package crd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The digest is written into the generated files themselves (`make
// generate` stamps them), so a CRD carries it however it is installed:
// by the CLI, by `kubectl apply -f config/crd/bases`, by kustomize or by
// the Helm chart's crds/. A controller without the right to write CRDs
// then recognises the one it was built with.
var (
	digestKey    = []byte("    " + AnnotationDigest + ": ")
	generatorKey = []byte("    controller-gen.kubebuilder.io/version: ")
)

// Digest is the SHA-256 of a generated CRD file without its digest line.
func Digest(file []byte) string {
	sum := sha256.Sum256(unstamped(file))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Stamp writes the file's digest into its metadata.annotations, after
// controller-gen's own annotation, replacing an earlier digest.
func Stamp(file []byte) ([]byte, error) {
	b := unstamped(file)
	i := bytes.Index(b, generatorKey)
	if i < 0 {
		return nil, fmt.Errorf("no %q line to stamp the digest after: is this controller-gen's output?", bytes.TrimSpace(generatorKey))
	}
	end := i + bytes.IndexByte(b[i:], '\n') + 1
	line := append(append(append([]byte{}, digestKey...), Digest(b)...), '\n')
	return append(append(append([]byte{}, b[:end]...), line...), b[end:]...), nil
}

// stamped reads the digest a file carries, "" when none.
func stamped(file []byte) string {
	i := bytes.Index(file, digestKey)
	if i < 0 {
		return ""
	}
	rest := file[i+len(digestKey):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return string(bytes.TrimSpace(rest))
}

func unstamped(file []byte) []byte {
	i := bytes.Index(file, digestKey)
	if i < 0 {
		return file
	}
	end := i + bytes.IndexByte(file[i:], '\n') + 1
	return append(append([]byte{}, file[:i]...), file[end:]...)
}
