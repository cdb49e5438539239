package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Loaded is a parsed plan and the directory its relative paths start from.
type Loaded struct {
	Plan    *v1alpha1.UpgradePlan
	BaseDir string
	// AllowHTTP is the driver's --allow-http-sources: the plan's url
	// sources and charts may be fetched over http:// even when its
	// spec.allowInsecureHTTP is not set.
	AllowHTTP bool
}

// DecodeError is a plan file that is not a well-formed UpgradePlan: an
// unknown field, a duration Go cannot parse, a value of the wrong type, a
// version written as a YAML number, or broken YAML. Check for it with
// errors.As.
type DecodeError struct {
	File string
	// Kind is the document's kind, for the hint ("UpgradePlan").
	Kind string
	// Problems are "field.path: what is wrong: the fix", one per mistake
	// found; empty when only the decoder's own error is known.
	Problems []string
	// Err is the decoder's error, or ErrVersionNotString when the file
	// decodes but spec.version is not a YAML string.
	Err error
}

func (e *DecodeError) Error() string {
	switch len(e.Problems) {
	case 0:
		return fmt.Sprintf("%s: %v (check the field names and value types against the %s schema)", e.File, e.Err, e.kind())
	case 1:
		return e.File + ": " + e.Problems[0]
	}
	return fmt.Sprintf("%s: %d problems:\n  %s", e.File, len(e.Problems), strings.Join(e.Problems, "\n  "))
}

func (e *DecodeError) Unwrap() error { return e.Err }

func (e *DecodeError) kind() string {
	if e.Kind == "" {
		return v1alpha1.PlanKind
	}
	return e.Kind
}

// Load reads a plan file strictly: an unknown field is an error, so a typo
// never silently drops a setting, and an unquoted version such as 1.10 is
// an error, so it never silently becomes "1.1" (see versionProblem).
// Decoding stops at the first mistake and names no field path, so on
// failure Load looks again and reports every mistake it can place with its
// path (see explainDecode).
func Load(path string) (*Loaded, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return Decode(path, b, abs)
}

// Decode is Load for a plan already read (a catalog's rendered template,
// a ConfigMap key): name says where it came from in errors, and baseDir
// is where its relative paths start ("" when it has no directory).
func Decode(name string, b []byte, baseDir string) (*Loaded, error) {
	var found []string
	if msg := versionProblem(b); msg != "" {
		found = append(found, msg)
	}
	var p v1alpha1.UpgradePlan
	if err := DecodeStrict(name, v1alpha1.PlanKind, b, &p); err != nil {
		de := err.(*DecodeError)
		if len(de.Problems) == 0 && len(found) > 0 {
			// Nothing placed the decoder's error: keep its own word for it.
			de.Problems = []string{fmt.Sprintf("%v (check the field names and value types against the UpgradePlan schema)", de.Err)}
		}
		de.Problems = append(found, de.Problems...)
		return nil, de
	}
	if len(found) > 0 {
		return nil, &DecodeError{File: name, Problems: found, Err: ErrVersionNotString}
	}
	return &Loaded{Plan: &p, BaseDir: baseDir}, nil
}

// DecodeStrict decodes the YAML or JSON document b into out (a pointer to
// a struct) as plans are decoded: an unknown field or a value of the wrong
// type is a *DecodeError naming every mistake it can place with its field
// path (none when it cannot place the decoder's error, which Err keeps).
// kind names the document in hints.
func DecodeStrict(name, kind string, b []byte, out any) error {
	err := yaml.UnmarshalStrict(b, out)
	if err == nil {
		return nil
	}
	return &DecodeError{File: name, Kind: kind, Problems: explainDecode(b, reflect.TypeOf(out), kind), Err: err}
}

const durationHint = "use a Go duration such as 30s, 5m or 1h30m"

var (
	durationType    = reflect.TypeOf(metav1.Duration{})
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// explainDecode finds, with their field paths, the mistakes that make
// strict decoding fail: unknown fields, durations Go cannot parse, and
// numbers or booleans written as something else. It decodes the YAML
// loosely and walks it alongside the UpgradePlan type. Strings are not
// checked: YAML scalars decode into string fields whatever they look like.
// It returns nothing for broken YAML, whose own error already says where.
func explainDecode(b []byte, t reflect.Type, kind string) []string {
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil
	}
	var out []string
	explain(t, doc, nil, kind, &out)
	return out
}

func explain(t reflect.Type, v any, path *field.Path, kind string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return // null leaves the zero value
	}
	add := func(format string, args ...any) {
		*out = append(*out, path.String()+": "+fmt.Sprintf(format, args...))
	}
	switch {
	case t == durationType:
		if s, ok := v.(string); !ok {
			add("invalid duration %v: %s", v, durationHint)
		} else if _, err := parseDuration(s); err != nil {
			add("invalid duration %q: %s", s, durationHint)
		}
		return
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return // decodes itself: nothing to say about its insides
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			add("must be a mapping of fields (name: value), not %s", describe(v))
			return
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, ok := fields.lookup(k)
			if !ok {
				*out = append(*out, fmt.Sprintf("%s: unknown field %q: %s", child(path, k), k, fields.hint(k, kind)))
				continue
			}
			explain(ft, m[k], child(path, k), kind, out)
		}
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			add("must be a list, not %s", describe(v))
			return
		}
		for i, item := range l {
			explain(t.Elem(), item, path.Index(i), kind, out)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			add("must be a mapping (key: value), not %s", describe(v))
			return
		}
		for _, k := range sortedKeys(m) {
			explain(t.Elem(), m[k], path.Key(k), kind, out)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			add("must be a whole number, not %s", describe(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			add("must be true or false, not %s", describe(v))
		}
	}
}

// parseDuration is how metav1.Duration reads its string.
func parseDuration(s string) (metav1.Duration, error) {
	var d metav1.Duration
	err := d.UnmarshalJSON([]byte(fmt.Sprintf("%q", s)))
	return d, err
}

func child(path *field.Path, name string) *field.Path {
	if path == nil {
		return field.NewPath(name)
	}
	return path.Child(name)
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%v", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// structFields are a struct's JSON field names (inline embedded structs
// flattened) and their types, in declaration order.
type structFields struct {
	names []string
	types map[string]reflect.Type
}

func jsonFields(t reflect.Type) structFields {
	fs := structFields{types: map[string]reflect.Type{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			inner := f.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			in := jsonFields(inner)
			for _, n := range in.names {
				fs.add(n, in.types[n])
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs.add(name, f.Type)
	}
	return fs
}

func (fs *structFields) add(name string, t reflect.Type) {
	if _, dup := fs.types[name]; !dup {
		fs.names = append(fs.names, name)
	}
	fs.types[name] = t
}

// lookup matches a key as encoding/json does: exactly, else ignoring case.
func (fs structFields) lookup(key string) (reflect.Type, bool) {
	if t, ok := fs.types[key]; ok {
		return t, true
	}
	for _, n := range fs.names {
		if strings.EqualFold(n, key) {
			return fs.types[n], true
		}
	}
	return nil, false
}

// hint suggests the field the author probably meant, and lists the
// fields allowed here when they are few enough to read.
func (fs structFields) hint(key, kind string) string {
	var b strings.Builder
	best, bestDist := "", 3
	for _, n := range fs.names {
		if d := editDistance(strings.ToLower(key), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		fmt.Fprintf(&b, "did you mean %q? ", best)
	}
	if len(fs.names) <= 12 { // a gate's timeout, severity and kinds still read as one list
		fmt.Fprintf(&b, "the fields here are %s", strings.Join(fs.names, ", "))
	} else {
		b.WriteString("check the field name against the " + kind + " schema")
	}
	return b.String()
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
