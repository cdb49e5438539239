package runstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Where and how a run is kept.
const (
	// Resource is the UpgradeRun resource, in upshift.dev/v1alpha1.
	Resource = "upgraderuns"
	// LabelRun carries the run's name (shortened with a hash past 63
	// characters) on the run and on its source chunks.
	LabelRun = "upshift.dev/run"
	// LabelManagedBy and ManagedBy say which tool wrote the object.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "upshift"

	// Limits of a Secret's name (DNS subdomain) and of a label value.
	maxNameLen  = 253
	maxLabelLen = 63
	hashLen     = 10
)

// labelValue is the run's name as a label value.
func labelValue(run string) string { return shorten(run, maxLabelLen) }

// shorten returns s if it fits in max, else a prefix of s and a hash of
// all of s, so two long names that share a prefix still differ. Dots and
// dashes before the hash are dropped: "a.-b" is not a valid DNS name.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	prefix := strings.TrimRight(s[:max-hashLen-1], ".-_")
	return prefix + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

func labelsFor(run string) map[string]string {
	return map[string]string{LabelRun: labelValue(run), LabelManagedBy: ManagedBy}
}
