package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// ErrInvalidSource: a source sets none, or more than one, of path, url and
// inline.
var ErrInvalidSource = errors.New("a source needs exactly one of path, url or inline")

// manifestExts are the file names a directory source reads.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Read returns a source's bytes: Path is a file or a directory (every
// *.yaml, *.yml and *.json file in it, not recursive, sorted by name, joined
// as a YAML stream), relative to baseDir; URL is fetched with GET (see
// fetch); Inline is returned as is.
func Read(ctx context.Context, src v1alpha1.Source, baseDir string) ([]byte, error) {
	set := 0
	for _, s := range []string{src.Path, src.URL, src.Inline} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("read source: %w", ErrInvalidSource)
	}
	switch {
	case src.Inline != "":
		return []byte(src.Inline), nil
	case src.URL != "":
		b, err := fetch(ctx, src, baseDir)
		if err != nil {
			// The HTTP client's errors quote the URL, query and all.
			return nil, fmt.Errorf("read %s: %w", Describe(src), redact.Error(err))
		}
		return b, nil
	default:
		b, err := readPath(resolve(baseDir, src.Path))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", Describe(src), err)
		}
		return b, nil
	}
}

// Describe names a source in messages: "path crds/", "url https://…"
// (without the credentials it may carry), "inline YAML" (never its
// content).
func Describe(src v1alpha1.Source) string {
	switch {
	case src.Path != "":
		return "path " + src.Path
	case src.URL != "":
		return "url " + redact.URL(src.URL)
	default:
		return "inline YAML"
	}
}

// resolve makes a plan-relative path absolute.
func resolve(baseDir, p string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	return filepath.Join(baseDir, p)
}

func readPath(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return os.ReadFile(p)
	}
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && manifestExts[strings.ToLower(filepath.Ext(e.Name()))] {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	var out bytes.Buffer
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(p, name))
		if err != nil {
			return nil, err
		}
		// Every file starts a new document, so that a JSON file (or a
		// YAML file without a trailing newline) never merges with its
		// neighbour.
		out.WriteString("---\n")
		out.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}
