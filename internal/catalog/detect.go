package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Finding is what one version source said.
type Finding struct {
	// Source names it: "configMap demo-system/demo-version key version".
	Source string `json:"source"`
	// Value is what it holds, as written ("v1.1.0"); empty when missing.
	Value string `json:"value,omitempty"`
	// Missing: the object, key, container or release does not exist.
	Missing bool `json:"missing,omitempty"`
	// Optional: a missing optional source is left out.
	Optional bool `json:"optional,omitempty"`
	// Err is why it could not be read (forbidden, unreachable) or why its
	// value is not a version.
	Err error `json:"-"`
}

func (f Finding) String() string {
	switch {
	case f.Err != nil:
		return fmt.Sprintf("%s: %v", f.Source, f.Err)
	case f.Missing:
		return f.Source + ": not found"
	}
	return fmt.Sprintf("%s: %s", f.Source, f.Value)
}

// ErrNothingInstalled: no version source found anything (the catalog names
// some).
var ErrNothingInstalled = errors.New("no version source found the platform")

// DetectError is a detection that gives no single version: the sources
// disagree, one is missing or unreadable, or the catalog names none.
type DetectError struct {
	Findings []Finding
	Reason   string
}

func (e *DetectError) Error() string {
	if len(e.Findings) == 0 {
		return e.Reason
	}
	lines := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		lines[i] = f.String()
	}
	return fmt.Sprintf("%s:\n  %s", e.Reason, strings.Join(lines, "\n  "))
}

// Is makes a detection where every source is missing ErrNothingInstalled.
func (e *DetectError) Is(target error) bool {
	if target != ErrNothingInstalled || len(e.Findings) == 0 {
		return false
	}
	for _, f := range e.Findings {
		if !f.Missing {
			return false
		}
	}
	return true
}

// Agree is the version every source found. Sources that disagree are
// reported, never guessed between: one that is missing while others
// found a version is a disagreement too (a half-installed platform),
// unless it is optional. A value that is not a semantic version is an
// error naming the source.
func Agree(findings []Finding) (*semver.Version, error) {
	if len(findings) == 0 {
		return nil, &DetectError{Reason: "the catalog names no version source (spec.detect)"}
	}
	var found []*semver.Version
	var problems []Finding
	allMissing := true
	for i, f := range findings {
		if f.Missing && f.Optional {
			continue
		}
		if !f.Missing {
			allMissing = false
		}
		if f.Err != nil || f.Missing {
			problems = append(problems, f)
			continue
		}
		v, err := semver.NewVersion(f.Value)
		if err != nil {
			findings[i].Err = fmt.Errorf("%q is not a semantic version", f.Value)
			problems = append(problems, findings[i])
			continue
		}
		found = append(found, v)
	}
	if allMissing {
		return nil, &DetectError{Findings: findings, Reason: "no version source found the platform: it is not installed, or spec.detect looks in the wrong place"}
	}
	if len(problems) > 0 {
		return nil, &DetectError{Findings: findings, Reason: "the version sources do not give one version"}
	}
	for _, v := range found[1:] {
		if !v.Equal(found[0]) {
			return nil, &DetectError{Findings: findings, Reason: fmt.Sprintf("the version sources disagree (%s)", strings.Join(distinct(found), ", "))}
		}
	}
	return found[0], nil
}

// distinct are the versions found, each once, lowest first.
func distinct(vs []*semver.Version) []string {
	seen := map[string]bool{}
	var out []*semver.Version
	for _, v := range vs {
		if !seen[v.String()] {
			seen[v.String()] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LessThan(out[j]) })
	s := make([]string, len(out))
	for i, v := range out {
		s[i] = v.String()
	}
	return s
}

// ImageTag is the tag of an image reference: "ghcr.io/liqotech/liqo:v1.1.0"
// and "registry:5000/x:v1@sha256:…" give "v1.1.0" and "v1"; an image
// without a tag (or by digest only) gives false.
func ImageTag(image string) (string, bool) {
	ref, _, _ := strings.Cut(image, "@")
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash { // no colon, or the registry's port
		return "", false
	}
	return ref[colon+1:], ref[colon+1:] != ""
}
