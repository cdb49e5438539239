package redact

import (
	"net/url"
	"strings"
)

// URL hides the credentials a URL may carry (user info and query, where
// tokens travel) and keeps the rest, so a message still says which
// endpoint it was.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		// "user:pass@host/x" parses as scheme "user" with an opaque rest.
		return unparsableURL(raw)
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	return u.String()
}

// unparsableURL hides what would be user info (up to the last "@" before
// the path) and the query of a string that is no hierarchical URL, and
// keeps the rest, so a message about a mistyped URL still shows the
// mistake.
func unparsableURL(raw string) string {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i+1] + "xxxxx"
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + len("://")
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?"); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndexByte(raw[start:end], '@'); at >= 0 {
		raw = raw[:start] + "xxxxx" + raw[start+at:]
	}
	return raw
}

// URLIn replaces every occurrence of raw in text (an error message that
// quotes the URL, say) with its redacted form.
func URLIn(text, raw string) string {
	if raw == "" {
		return text
	}
	return strings.ReplaceAll(text, raw, URL(raw))
}

// Chart shows a Helm chart reference: an http(s) or oci:// URL through
// URL, a local path or a repository chart name as it is.
func Chart(chart string) string {
	if strings.Contains(chart, "://") {
		return URL(chart)
	}
	return chart
}
