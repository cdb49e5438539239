package runstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Where and how a run is kept.
const (
	// SecretType marks a Secret as a run record.
	SecretType = "upshift.dev/run"
	// LabelRun carries the run's name (shortened with a hash past 63
	// characters); `kubectl get secret -l upshift.dev/run` lists runs.
	LabelRun = "upshift.dev/run"
	// LabelManagedBy and ManagedBy say which tool wrote the Secret.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "upshift"
	// AnnotationPhase mirrors status.phase, AnnotationPlanVersion
	// spec.plan.version, for `kubectl describe`.
	AnnotationPhase       = "upshift.dev/phase"
	AnnotationPlanVersion = "upshift.dev/plan-version"
	// annotationRunVersion was set when sources were written into the
	// record's Secret (records of earlier versions): the Secret's
	// resourceVersion at which run.json was last written. Save accepts a
	// run read at that version; the next save clears it.
	annotationRunVersion = "upshift.dev/run-resource-version"

	// KeyRun held the whole UpgradeRun as JSON in records of earlier
	// versions (now spec.json, status.json and stage-NNN.json, see
	// record.go); legacyKeySources held their resolved sources,
	// gzip-compressed, before those moved to chunks (spec.sources).
	KeyRun           = "run.json"
	legacyKeySources = "sources.json.gz"

	secretPrefix = "upshift-run-"
	// Limits of a Secret's name (DNS subdomain) and of a label value.
	maxNameLen  = 253
	maxLabelLen = 63
	hashLen     = 10
)

// SecretName is the name of the Secret that keeps the run named run.
func SecretName(run string) string { return shorten(secretPrefix+run, maxNameLen) }

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
