package freeze

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Labels and annotations on a freeze's objects, so they can be found by
// run. The label holds the run's name shortened to a label value; the
// annotations hold the run's and the step's names as written.
const (
	LabelRun       = "upshift.dev/run"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "upshift"
	AnnotationRun  = "upshift.dev/run"
	AnnotationStep = "upshift.dev/step"
	namePrefix     = "upshift-freeze-"
	maxNameLen     = 63 // a DNS label: readable, and valid as any name
	hashLen        = 10
)

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// Name is the name of the policy, its binding and the probe of one freeze:
// upshift-freeze-<run>-<step>, made a valid DNS label and cut to fit,
// then a hash of the runs namespace, the run and the step. Policies are
// cluster-wide while runs are kept per runs namespace (two drivers with
// their own namespaces may each have a run of the same name), and names
// made valid may meet ("a.b", "a-b"): the hash keeps every freeze's name
// its own, the rest keeps it readable.
func Name(runsNamespace, run, step string) string {
	clean := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(namePrefix+run+"-"+step), "-"), "-")
	sum := sha256.Sum256([]byte(runsNamespace + "\x00" + run + "\x00" + step))
	keep := min(len(clean), maxNameLen-hashLen-1)
	return strings.TrimRight(clean[:keep], "-") + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// labelValue is the run's name as a label value (shortened with a hash
// past 63 characters, as the run store does).
func labelValue(run string) string {
	if len(run) <= 63 {
		return run
	}
	sum := sha256.Sum256([]byte(run))
	return strings.TrimRight(run[:63-hashLen-1], ".-_") + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
