package source

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest is "sha256:<hex>" of the bytes: what a run records to notice a
// source that changed between attempts.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
