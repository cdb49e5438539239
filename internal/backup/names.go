package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// SecretType marks the Secrets that hold backups.
const SecretType corev1.SecretType = "upshift.dev/backup"

// Labels select a key's Secrets. Their values are shortened with a hash
// when the run or stage name is not a valid label value; the annotations
// of the same names keep the exact values.
const (
	LabelRun     = "upshift.dev/run"
	LabelStage   = "upshift.dev/stage"
	LabelAttempt = "upshift.dev/attempt"
)

// Annotations on every chunk Secret.
const (
	AnnotationChunk          = "upshift.dev/chunk"           // "<index>/<count>", from 0
	AnnotationChunkSHA256    = "upshift.dev/chunk-sha256"    // of this chunk's bytes
	AnnotationSnapshotSHA256 = "upshift.dev/snapshot-sha256" // of the whole uncompressed snapshot
	AnnotationObjects        = "upshift.dev/objects"         // objects that existed
	AnnotationAbsent         = "upshift.dev/absent"          // objects that did not
	AnnotationCreatedAt      = "upshift.dev/created-at"      // RFC 3339
	// AnnotationUnclaimed marks, on chunk 0, a backup saved before its
	// stage's turn and not yet claimed for it (SaveUnclaimed, Claim).
	AnnotationUnclaimed = "upshift.dev/unclaimed"
)

// dataKey holds a chunk's bytes in its Secret.
const dataKey = "chunk"

// String is the form messages use: "run demo-1, stage crds, attempt 1".
func (k Key) String() string {
	return fmt.Sprintf("run %s, stage %s, attempt %d", k.Run, k.Stage, k.Attempt)
}

// Selector is the label selector of the key's Secrets, for kubectl.
func (k Key) Selector() string {
	return labels.SelectorFromSet(k.labels()).String()
}

func (k Key) validate() error {
	if k.Run == "" || k.Stage == "" || k.Attempt < 0 {
		return fmt.Errorf("invalid backup key (%s): run and stage are required, attempt must not be negative", k)
	}
	return nil
}

// hash is a short digest of a key, so that names stay distinct when
// sanitizing or shortening would make two keys look alike.
func (k Key) hash() string {
	return shortHash(fmt.Sprintf("%s\x00%s\x00%d", k.Run, k.Stage, k.Attempt))
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

// SecretName is the deterministic name of a key's chunk: a crashed Save is
// redone onto the same Secrets. It is a valid DNS subdomain of at most 253
// characters: "upshift-backup-<run>-<stage>-<attempt>-<hash>-<index>", the
// readable part sanitized and cut as needed; the hash keeps keys apart.
func SecretName(k Key, index int) string {
	prefix := fmt.Sprintf("upshift-backup-%s-%s-%d", dnsLabelish(k.Run), dnsLabelish(k.Stage), k.Attempt)
	suffix := "-" + k.hash() + "-" + strconv.Itoa(index)
	if room := validation.DNS1123SubdomainMaxLength - len(suffix); len(prefix) > room {
		prefix = strings.TrimRight(prefix[:room], "-")
	}
	return prefix + suffix
}

// dnsLabelish lowercases s and turns every run of characters other than
// [a-z0-9] into one "-".
func dnsLabelish(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "x"
	}
	return out
}

// labelValue is s when it is a valid label value, else a readable prefix
// and a hash of s.
func labelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		}
	}
	keep := b.String()
	if len(keep) > 50 {
		keep = keep[:50]
	}
	keep = strings.TrimFunc(keep, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if keep == "" {
		return shortHash(s)
	}
	return keep + "-" + shortHash(s)
}

// labels select one key's Secrets.
func (k Key) labels() map[string]string {
	return map[string]string{
		LabelRun:     labelValue(k.Run),
		LabelStage:   labelValue(k.Stage),
		LabelAttempt: strconv.Itoa(k.Attempt),
	}
}

// keyOf reads a Secret's key back from its annotations.
func keyOf(annotations map[string]string) (Key, bool) {
	run, okRun := annotations[LabelRun]
	stage, okStage := annotations[LabelStage]
	attempt, err := strconv.Atoi(annotations[LabelAttempt])
	if !okRun || !okStage || err != nil {
		return Key{}, false
	}
	return Key{Run: run, Stage: stage, Attempt: attempt}, true
}
