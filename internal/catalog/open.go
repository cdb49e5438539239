package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/source"
)

// FileName is the catalog document's name in a directory or a ConfigMap.
const FileName = "catalog.yaml"

// configMapPrefixes mark a catalog in a ConfigMap, named kubectl's way:
// configmap/NAME (or cm/NAME).
var configMapPrefixes = []string{"configmap/", "configmaps/", "cm/"}

// Ref is where a catalog is: exactly one field is set.
type Ref struct {
	// Path is a directory holding catalog.yaml, or the catalog file.
	Path string
	// URL is an https:// URL of the catalog file; its plans' relative
	// names are relative to it.
	URL string
	// ConfigMap names a ConfigMap holding catalog.yaml and the plans as
	// keys, in Namespace.
	ConfigMap string
	Namespace string
}

// ParseRef reads a --catalog argument: configmap/NAME, an https:// URL,
// or a path. namespace is where a ConfigMap is read from.
func ParseRef(s, namespace string) (Ref, error) {
	for _, p := range configMapPrefixes {
		if strings.HasPrefix(strings.ToLower(s), p) {
			name := s[len(p):]
			if name == "" || strings.Contains(name, "/") {
				return Ref{}, fmt.Errorf("--catalog %s: name the ConfigMap as configmap/NAME, its namespace with -n", s)
			}
			return Ref{ConfigMap: name, Namespace: namespace}, nil
		}
	}
	switch {
	case s == "":
		return Ref{}, errors.New("--catalog is required: a directory with catalog.yaml, an https:// URL, or configmap/NAME")
	case strings.HasPrefix(s, "http://"):
		return Ref{}, fmt.Errorf("--catalog %s: serve the catalog over https://, a plain-http catalog could be changed on its way", redact.URL(s))
	case strings.HasPrefix(s, "https://"):
		if _, err := url.Parse(s); err != nil {
			return Ref{}, fmt.Errorf("--catalog: %w", redact.Error(err))
		}
		return Ref{URL: s}, nil
	}
	return Ref{Path: s}, nil
}

func (r Ref) String() string {
	switch {
	case r.URL != "":
		return redact.URL(r.URL)
	case r.ConfigMap != "":
		return fmt.Sprintf("configmap %s/%s", r.Namespace, r.ConfigMap)
	}
	return r.Path
}

// Catalog is a validated catalog and where its files are read.
type Catalog struct {
	*ReleaseCatalog
	// Where names it in messages.
	Where string
	files files
	// overrides are the driver's values (SetValues).
	overrides map[string]string
	// fromCluster are the values spec.valuesFrom read (ReadValues).
	fromCluster map[string]string
}

// files reads a catalog's files by their names in the catalog.
type files interface {
	read(ctx context.Context, name string) ([]byte, error)
	// baseDir is where a plan's relative paths start; "" when plans may
	// name no file.
	baseDir(name string) string
	describe(name string) string
}

// Options are what opening a catalog may need.
type Options struct {
	// Objects reads a ConfigMap catalog.
	Objects source.Objects
	// CAFile is trusted, besides the system's roots, for a URL catalog and
	// the plans it names.
	CAFile string
}

// Open reads and validates the catalog at ref.
func Open(ctx context.Context, ref Ref, opts Options) (*Catalog, error) {
	var fs files
	name := FileName
	switch {
	case ref.URL != "":
		fs = urlFiles{base: ref.URL, caFile: opts.CAFile}
		name = ref.URL
	case ref.ConfigMap != "":
		fs = configMapFiles{name: ref.ConfigMap, env: source.Env{Namespace: ref.Namespace, Objects: opts.Objects}}
	default:
		dir := ref.Path
		if st, err := os.Stat(ref.Path); err == nil && !st.IsDir() {
			dir, name = filepath.Dir(ref.Path), filepath.Base(ref.Path)
		} else if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", ref.Path, err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		fs = dirFiles{dir: abs}
	}
	b, err := fs.read(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", ref, err)
	}
	var doc ReleaseCatalog
	if err := plan.DecodeStrict(ref.String(), Kind, b, &doc); err != nil {
		return nil, err
	}
	if errs := Validate(&doc); len(errs) > 0 {
		return nil, &InvalidError{Where: ref.String(), Errs: errs}
	}
	return &Catalog{ReleaseCatalog: &doc, Where: ref.String(), files: fs}, nil
}

type dirFiles struct{ dir string }

func (d dirFiles) read(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(d.path(name))
}

func (d dirFiles) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(d.dir, name)
}

func (d dirFiles) baseDir(name string) string { return filepath.Dir(d.path(name)) }
func (d dirFiles) describe(name string) string {
	return d.path(name)
}

type urlFiles struct{ base, caFile string }

func (u urlFiles) resolve(name string) (string, error) {
	base, err := url.Parse(u.base)
	if err != nil {
		return "", err
	}
	rel, err := url.Parse(name)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %w", name, err)
	}
	return base.ResolveReference(rel).String(), nil
}

func (u urlFiles) read(ctx context.Context, name string) ([]byte, error) {
	full, err := u.resolve(name)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(full, "https://") {
		return nil, fmt.Errorf("%s: a catalog's files are fetched over https:// only", redact.URL(full))
	}
	return source.Read(ctx, v1alpha1.Source{URL: full, CAFile: u.caFile}, source.Env{})
}

func (u urlFiles) baseDir(string) string { return "" }
func (u urlFiles) describe(name string) string {
	if full, err := u.resolve(name); err == nil {
		return redact.URL(full)
	}
	return name
}

type configMapFiles struct {
	name string
	env  source.Env
}

func (c configMapFiles) read(ctx context.Context, key string) ([]byte, error) {
	return source.Read(ctx, v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: c.name, Key: key}}, c.env)
}

func (c configMapFiles) baseDir(string) string { return "" }
func (c configMapFiles) describe(key string) string {
	return fmt.Sprintf("configmap %s/%s key %s", c.env.Namespace, c.name, key)
}
