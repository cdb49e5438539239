package runstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/kube"
)

// maxSecretData is what the API server accepts in one Secret's data.
const maxSecretData = 1 << 20

// conflictTries bounds SaveSources' read-and-patch rounds against
// concurrent writers of the run.
const conflictTries = 5

// SaveSources stores the run's resolved source contents (field path ->
// bytes), gzip-compressed, next to the run; it replaces what was stored.
// The run must have been saved first (else ErrNotFound). A run read
// before SaveSources stays valid for Save.
func (s *Store) SaveSources(ctx context.Context, name string, sources map[string][]byte) error {
	gz, err := encodeSources(sources)
	if err != nil {
		return fmt.Errorf("save sources of run %s: %w", name, err)
	}
	for try := 1; ; try++ {
		sec, err := s.secret(ctx, name)
		if err != nil {
			return fmt.Errorf("save sources: %w", err)
		}
		if n := len(gz) + len(sec.Data[KeyRun]); n > maxSecretData {
			return fmt.Errorf("save sources of run %s: %d bytes compressed with the run, over the %d bytes a Secret holds", name, n, maxSecretData)
		}
		err = retry(ctx, func(int) error { return s.patchSources(ctx, sec, gz) })
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || try == conflictTries {
			switch {
			case apierrors.IsNotFound(err):
				err = ErrNotFound
			case apierrors.IsConflict(err):
				err = fmt.Errorf("%w: %d writers got in between", ErrConflict, conflictTries)
			}
			return fmt.Errorf("save sources of run %s: %w", name, err)
		}
	}
}

// patchSources writes the sources into sec, on condition that sec is still
// current, and records the version at which run.json was written unless an
// earlier SaveSources did.
func (s *Store) patchSources(ctx context.Context, sec *corev1.Secret, gz []byte) error {
	meta := map[string]any{"resourceVersion": sec.ResourceVersion}
	if sec.Annotations[annotationRunVersion] == "" {
		meta["annotations"] = map[string]string{annotationRunVersion: sec.ResourceVersion}
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": meta,
		"data":     map[string][]byte{KeySources: gz},
	})
	if err != nil {
		return err
	}
	_, err = s.cs.CoreV1().Secrets(s.namespace).Patch(ctx, sec.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: kube.FieldManager})
	return err
}

// LoadSources returns the sources SaveSources stored: an empty map when the
// run has none, an error wrapping ErrNotFound when there is no such run.
func (s *Store) LoadSources(ctx context.Context, name string) (map[string][]byte, error) {
	sec, err := s.secret(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	gz, ok := sec.Data[KeySources]
	if !ok {
		return map[string][]byte{}, nil
	}
	out, err := decodeSources(gz)
	if err != nil {
		return nil, fmt.Errorf("load sources of run %s from secret %s/%s: %w", name, sec.Namespace, sec.Name, err)
	}
	return out, nil
}

// storedSources is the JSON inside sources.json.gz. Text goes in as
// strings, which compress about a third better than base64; anything that
// is not UTF-8 goes in as base64, since a JSON string would mangle it.
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
	raw, err := json.Marshal(&st)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeSources(gz []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, err
	}
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
