// Package clip cuts text kept in a status field to the field's bound.
package clip

import "unicode/utf8"

// Bytes cuts s to at most n bytes, on a rune boundary, ending in "…".
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
