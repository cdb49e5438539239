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

// ErrInvalidSource: a source sets none, or more than one, of path, url,
// inline, configMap and secret.
var ErrInvalidSource = errors.New("a source needs exactly one of path, url, inline, configMap or secret")

// manifestExts are the file names a directory source reads.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Env is where a plan's sources are read from.
type Env struct {
	// BaseDir is what a path is relative to: the plan file's directory.
	BaseDir string
	// Namespace holds the ConfigMaps and Secrets sources name: the plan's.
	Namespace string
	// NamespaceDefaulted says, in messages, that Namespace is "default"
	// because the plan file sets none.
	NamespaceDefaulted bool
	// Objects reads them; nil: such sources are an error
	// (ErrNoObjects).
	Objects Objects
	// AllowHTTP lets url sources be fetched over plain http:// (the
	// plan's spec.allowInsecureHTTP, or the driver's
	// --allow-http-sources).
	AllowHTTP bool
}

// Read returns a source's bytes: Path is a file or a directory (every
// *.yaml, *.yml and *.json file in it, not recursive, sorted by name, joined
// as a YAML stream), relative to env.BaseDir; URL is fetched with GET (see
// fetch); Inline is returned as is; ConfigMap and Secret are read from
// env.Namespace through env.Objects (see readObject).
func Read(ctx context.Context, src v1alpha1.Source, env Env) ([]byte, error) {
	set := 0
	for _, s := range []bool{src.Path != "", src.URL != "", src.Inline != "", src.ConfigMap != nil, src.Secret != nil} {
		if s {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("read source: %w", ErrInvalidSource)
	}
	switch {
	case src.Inline != "":
		return []byte(src.Inline), nil
	case src.ConfigMap != nil:
		return readObject(ctx, env, KindConfigMap, *src.ConfigMap)
	case src.Secret != nil:
		return readObject(ctx, env, KindSecret, *src.Secret)
	case src.URL != "":
		if err := CheckScheme(src.URL, env.AllowHTTP); err != nil {
			return nil, fmt.Errorf("read %s: %w", Describe(src), err)
		}
		b, err := fetch(ctx, src, env.BaseDir, env.AllowHTTP)
		if err != nil {
			// The HTTP client's errors quote the URL, query and all.
			return nil, fmt.Errorf("read %s: %w", Describe(src), redact.Error(err))
		}
		return b, nil
	default:
		b, err := readPath(resolve(env.BaseDir, src.Path))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", Describe(src), err)
		}
		return b, nil
	}
}

// Describe names a source in messages: "path crds/", "url https://…"
// (without the credentials it may carry), "inline YAML" (never its
// content), "configMap web-manifests" (every key) or "secret
// web-values/values.yaml" (one key; never the content).
func Describe(src v1alpha1.Source) string {
	switch {
	case src.Path != "":
		return "path " + src.Path
	case src.URL != "":
		return "url " + redact.URL(src.URL)
	case src.ConfigMap != nil:
		return DescribeRef(KindConfigMap, *src.ConfigMap)
	case src.Secret != nil:
		return DescribeRef(KindSecret, *src.Secret)
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
	var docs [][]byte
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(p, name))
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return joinDocuments(docs), nil
}

// joinDocuments joins files (or keys) as one YAML stream. Every part
// starts a new document, so that a JSON part (or a YAML part without a
// trailing newline) never merges with its neighbour.
func joinDocuments(parts [][]byte) []byte {
	var out bytes.Buffer
	for _, b := range parts {
		out.WriteString("---\n")
		out.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}
