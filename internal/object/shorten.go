package object

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// hashLen is how many hex digits of a hash end a shortened name.
const hashLen = 10

// Shorten returns s if it fits in max, else a prefix of s and a hash of
// all of s, so two long names that share a prefix still differ. Dots and
// dashes before the hash are dropped: "a.-b" is not a valid DNS name.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	prefix := strings.TrimRight(s[:max-hashLen-1], ".-_")
	return prefix + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
