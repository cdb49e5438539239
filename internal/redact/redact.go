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
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	return u.String()
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
