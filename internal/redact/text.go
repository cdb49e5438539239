package redact

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// urlInText matches what looks like a URL in free text: a scheme, "://",
// and everything up to a space or a quote (Go's and Helm's errors quote
// the URLs they name).
var urlInText = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>`]+")

// trailing is punctuation that ends a sentence rather than a URL.
const trailing = ".,;:)]}"

// Text passes every URL in text through [URL]: an error from an HTTP
// client, Helm's getters or a registry may quote the URL it was given,
// credentials and all (Go's own errors hide only the password). It is
// idempotent, so a message may go through it at each layer.
func Text(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, func(u string) string {
		body := strings.TrimRight(u, trailing)
		return URL(body) + u[len(body):]
	})
}

// Error is err with its text passed through [Text]; errors.Is and
// errors.As still see err.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{err: err, text: Text(err.Error())}
}

type redacted struct {
	err  error
	text string
}

func (e *redacted) Error() string { return e.text }
func (e *redacted) Unwrap() error { return e.err }

// MinSecretLen is the length from which a known secret string is hidden in
// free text. Shorter strings are words that occur in ordinary messages
// ("true", "info", "8080", a namespace "prod"), and hiding them would
// garble every message; the job step masks env values by the same rule.
const MinSecretLen = 6

// Hidden replaces a known secret in free text.
const Hidden = "<redacted>"

// Scrubber hides known secret strings (a Helm step's values, say) in
// free text, for errors from libraries that may quote them (Helm's schema
// validation quotes a value that does not match its pattern, the API
// server quotes an invalid field of a rendered object).
type Scrubber struct {
	secrets []string // longest first, so a value that contains another is hidden whole
}

// NewScrubber hides each of secrets at least MinSecretLen long.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	seen := map[string]bool{}
	for _, v := range secrets {
		if len(v) >= MinSecretLen && !seen[v] {
			seen[v] = true
			s.secrets = append(s.secrets, v)
		}
	}
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	return s
}

// Text hides the scrubber's secrets in text, then its URLs' credentials.
func (s *Scrubber) Text(text string) string {
	if s != nil {
		for _, v := range s.secrets {
			text = strings.ReplaceAll(text, v, Hidden)
		}
	}
	return Text(text)
}

// Error is err with its text through s.Text; errors.Is and errors.As still
// see err.
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{err: err, text: s.Text(err.Error())}
}

// Leaves are the string leaves of a decoded YAML or JSON value (maps and
// lists walked, named map types such as Helm's chartutil.Values included):
// the strings a Scrubber of Helm values hides. Numbers and booleans are
// left out: as text they are too common to hide.
func Leaves(v any) []string {
	var out []string
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.String:
			out = append(out, v.String())
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(v))
	return out
}
