package clip

import (
	"testing"
	"unicode/utf8"
)

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a longer message", 10, "a longe…"},
		{"héhéhéhé", 8, "héh…"},
	} {
		got := Bytes(tt.in, tt.n)
		if got != tt.want || len(got) > tt.n || !utf8.ValidString(got) {
			t.Errorf("Bytes(%q, %d) = %q, want %q (valid UTF-8, at most %d bytes)", tt.in, tt.n, got, tt.want, tt.n)
		}
	}
}
