package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
)

// SourcesSecretType marks the chunk Secrets of a run's sources.
const SourcesSecretType = "upshift.dev/sources"

// sourcesPrefix starts the names of a run's source chunks; the run's name
// follows, shortened to leave room for the digest and the index.
const sourcesPrefix = "upshift-src-"

// Saved is what a run was started from, as SaveSources keeps it.
type Saved struct {
	// Plan is the plan as written, secret values included: what drives
	// and resumes the run. The UpgradeRun resource holds it redacted.
	Plan v1alpha1.UpgradePlanSpec
	// Sources holds each resolved source's bytes by field path.
	Sources map[string][]byte
}

// SaveSources writes the plan as written and the run's resolved source
// contents (field path -> bytes) once, as content-addressed immutable
// chunk Secrets labelled with the run, read back and verified, and
// returns where they are: the caller records the ref in the run
// (spec.sources) before the run is first saved. Writing the same contents
// again (a run restarted after a crash before its record was saved) finds
// the chunks there and writes nothing.
func (s *Store) SaveSources(ctx context.Context, name string, plan v1alpha1.UpgradePlanSpec, sources map[string][]byte) (v1alpha1.BlobRef, error) {
	packed, err := PackSources(plan, sources)
	if err != nil {
		return v1alpha1.BlobRef{}, fmt.Errorf("save sources of run %s: %w", name, err)
	}
	return s.SavePackedSources(ctx, name, packed)
}

// PackedSources are a run's plan and sources encoded and packed, ready
// for SavePackedSources: packing megabytes of CRDs is CPU alone, which
// apply does while preflight waits on the API server.
type PackedSources struct {
	// Plan and Sources are what was packed.
	Plan    v1alpha1.UpgradePlanSpec
	Sources map[string][]byte
	blob    *chunks.Blob
}

// PackSources encodes and packs the plan as written and the sources.
func PackSources(plan v1alpha1.UpgradePlanSpec, sources map[string][]byte) (*PackedSources, error) {
	raw, err := encodeSources(&plan, sources)
	if err != nil {
		return nil, err
	}
	b, err := chunks.Prepare(raw)
	if err != nil {
		return nil, err
	}
	return &PackedSources{Plan: plan, Sources: sources, blob: b}, nil
}

// SavePackedSources writes what PackSources packed, as SaveSources does.
func (s *Store) SavePackedSources(ctx context.Context, name string, p *PackedSources) (v1alpha1.BlobRef, error) {
	prefix := shorten(sourcesPrefix+name, maxNameLen-32)
	ref, err := s.chunks.WriteBlob(ctx, prefix, labelsFor(name), p.blob)
	if err != nil {
		return v1alpha1.BlobRef{}, fmt.Errorf("save sources of run %s: %w", name, err)
	}
	return ref, nil
}

// LoadSources returns the plan as written and the sources saved with the
// run: from the chunks spec.sources names or, for a record of an earlier
// version, from its Secret (the plan, and the sources when they have no
// chunks of their own). An error wraps ErrNotFound when there is no such
// run, chunks.ErrCorrupt when a chunk is missing or altered.
func (s *Store) LoadSources(ctx context.Context, name string) (*Saved, error) {
	run, sec, err := s.read(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	var legacy *v1alpha1.UpgradeRun
	if sec != nil {
		legacy = run // a Secret record keeps the plan as written
	}
	ref := run.Spec.Sources
	if ref == nil {
		if sec == nil {
			return nil, fmt.Errorf("load sources of run %s: its spec.sources names no sources: apply the plan file again under a new name", name)
		}
		files, err := legacySources(sec)
		if err != nil {
			return nil, fmt.Errorf("load sources of run %s: %w", name, err)
		}
		return &Saved{Plan: legacy.Spec.Plan, Sources: files}, nil
	}
	raw, err := s.chunks.Read(ctx, *ref)
	if err != nil {
		return nil, fmt.Errorf("load sources of run %s: %w", name, err)
	}
	st, err := decodeSources(raw)
	if err != nil {
		return nil, fmt.Errorf("load sources of run %s from %v: %w", name, ref.Secrets, err)
	}
	switch {
	case st.Plan != nil:
		return &Saved{Plan: *st.Plan, Sources: st.Files}, nil
	case legacy != nil: // chunks of an earlier version hold the sources only
		return &Saved{Plan: legacy.Spec.Plan, Sources: st.Files}, nil
	}
	return nil, fmt.Errorf("load sources of run %s: the chunks %v hold no plan (spec.sources of an earlier version): apply the plan file again to resume it", name, ref.Secrets)
}

// storedSources is the JSON of what SaveSources keeps. Text goes in as
// strings, which compress about a third better than base64; anything
// that is not UTF-8 goes in as base64, since a JSON string would mangle
// it. Plan is absent from chunks of earlier versions.
type storedSources struct {
	Plan   *v1alpha1.UpgradePlanSpec `json:"plan,omitempty"`
	Text   map[string]string         `json:"text,omitempty"`
	Binary map[string][]byte         `json:"binary,omitempty"`
}

// decoded is storedSources read back.
type decoded struct {
	Plan  *v1alpha1.UpgradePlanSpec
	Files map[string][]byte
}

func encodeSources(plan *v1alpha1.UpgradePlanSpec, sources map[string][]byte) ([]byte, error) {
	st := storedSources{Plan: plan}
	for path, b := range sources {
		if utf8.Valid(b) {
			if st.Text == nil {
				st.Text = map[string]string{}
			}
			st.Text[path] = string(b)
			continue
		}
		if st.Binary == nil {
			st.Binary = map[string][]byte{}
		}
		st.Binary[path] = b
	}
	return json.Marshal(&st)
}

func decodeSources(raw []byte) (decoded, error) {
	var st storedSources
	if err := json.Unmarshal(raw, &st); err != nil {
		return decoded{}, err
	}
	out := make(map[string][]byte, len(st.Text)+len(st.Binary))
	for path, t := range st.Text {
		out[path] = []byte(t)
	}
	for path, b := range st.Binary {
		if _, dup := out[path]; dup {
			return decoded{}, errors.New("source " + path + " stored twice")
		}
		out[path] = b
	}
	return decoded{Plan: st.Plan, Files: out}, nil
}
