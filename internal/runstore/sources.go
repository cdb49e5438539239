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

// SaveSources writes the run's resolved source contents (field path ->
// bytes) once, as content-addressed immutable chunk Secrets labelled with
// the run, read back and verified, and returns where they are: the caller
// records the ref in the run (spec.sources) before the run starts. Writing
// the same contents again (a run restarted after a crash before its
// record was saved) finds the chunks there and writes nothing.
func (s *Store) SaveSources(ctx context.Context, name string, sources map[string][]byte) (v1alpha1.BlobRef, error) {
	raw, err := encodeSources(sources)
	if err != nil {
		return v1alpha1.BlobRef{}, fmt.Errorf("save sources of run %s: %w", name, err)
	}
	prefix := shorten(sourcesPrefix+name, maxNameLen-32)
	ref, err := s.chunks.Write(ctx, prefix, labelsFor(name), raw)
	if err != nil {
		return v1alpha1.BlobRef{}, fmt.Errorf("save sources of run %s: %w", name, err)
	}
	return ref, nil
}

// LoadSources returns the sources saved with the run: from the chunks
// spec.sources names, or, for a record written before sources had chunks
// of their own, from the record's Secret (an empty map when it has none).
// An error wraps ErrNotFound when there is no such run, chunks.ErrCorrupt
// when a chunk is missing or altered.
func (s *Store) LoadSources(ctx context.Context, name string) (map[string][]byte, error) {
	sec, err := s.secret(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	run, err := decodeRun(sec, name)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	if ref := run.Spec.Sources; ref != nil {
		raw, err := s.chunks.Read(ctx, *ref)
		if err != nil {
			return nil, fmt.Errorf("load sources of run %s: %w", name, err)
		}
		out, err := decodeSources(raw)
		if err != nil {
			return nil, fmt.Errorf("load sources of run %s from %v: %w", name, ref.Secrets, err)
		}
		return out, nil
	}
	gz, ok := sec.Data[legacyKeySources]
	if !ok {
		return map[string][]byte{}, nil
	}
	raw, err := chunks.Unpack(gz)
	if err == nil {
		var out map[string][]byte
		if out, err = decodeSources(raw); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("load sources of run %s from secret %s/%s: %w", name, sec.Namespace, sec.Name, err)
}

// storedSources is the JSON of a run's sources. Text goes in as strings,
// which compress about a third better than base64; anything that is not
// UTF-8 goes in as base64, since a JSON string would mangle it.
type storedSources struct {
	Text   map[string]string `json:"text,omitempty"`
	Binary map[string][]byte `json:"binary,omitempty"`
}

func encodeSources(sources map[string][]byte) ([]byte, error) {
	var st storedSources
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

func decodeSources(raw []byte) (map[string][]byte, error) {
	var st storedSources
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(st.Text)+len(st.Binary))
	for path, t := range st.Text {
		out[path] = []byte(t)
	}
	for path, b := range st.Binary {
		if _, dup := out[path]; dup {
			return nil, errors.New("source " + path + " stored twice")
		}
		out[path] = b
	}
	return out, nil
}
