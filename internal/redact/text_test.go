package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// Text hides the credentials of every URL an error quotes, keeps the
// rest of the message (and its punctuation) as it was, and is idempotent.
func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`no URL here`: `no URL here`,
		`Get "http://u:s3cr3t@127.0.0.1:80/x?token=s3cr3t": dial tcp: refused`:               `Get "http://xxxxx@127.0.0.1:80/x?xxxxx": dial tcp: refused`,
		`read url http://127.0.0.1/m.yaml?token=s3cr3t: GET answered 404`:                    `read url http://127.0.0.1/m.yaml?xxxxx: GET answered 404`,
		`looks like "https://bot:s3cr3t@charts.example.com" is not a valid chart repository`: `looks like "https://xxxxx@charts.example.com" is not a valid chart repository`,
		`pull oci://bot:s3cr3t@127.0.0.1:5000/c (twice), then https://x/y?a=s3cr3t.`:         `pull oci://xxxxx@127.0.0.1:5000/c (twice), then https://x/y?xxxxx.`,
		`clean https://127.0.0.1:9000/healthz answered 200`:                                  `clean https://127.0.0.1:9000/healthz answered 200`,
	} {
		got := Text(in)
		if got != want {
			t.Errorf("Text(%q)\n = %q\nwant %q", in, got, want)
		}
		if again := Text(got); again != got {
			t.Errorf("Text is not idempotent: %q then %q", got, again)
		}
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	err := Error(fmt.Errorf("fetch https://u:s3cr3t@h/x: %w", fs.ErrNotExist))
	if strings.Contains(err.Error(), "s3cr3t") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Error = %q (is ErrNotExist: %v)", err, errors.Is(err, fs.ErrNotExist))
	}
	if Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}

// A Scrubber hides known values (longest first, so one that contains
// another is hidden whole), not strings too short to be told from words,
// and URL credentials as Text does.
func TestScrubber(t *testing.T) {
	s := NewScrubber(Leaves(map[string]any{
		"db":      map[string]any{"password": "s3cr3t-pw", "prefix": "s3cr3t"},
		"tags":    []any{"short", "long-enough-tag"},
		"enabled": true, "replicas": 2.0,
	})...)
	in := `values don't meet the schema: '/db/password': 's3cr3t-pw' does not match; tag long-enough-tag; short; repo https://u:p@h/x; 2 replicas`
	want := `values don't meet the schema: '/db/password': '<redacted>' does not match; tag <redacted>; short; repo https://xxxxx@h/x; 2 replicas`
	if got := s.Text(in); got != want {
		t.Errorf("Text\n = %q\nwant %q", got, want)
	}
	err := s.Error(fmt.Errorf("render: %w (s3cr3t-pw)", fs.ErrInvalid))
	if strings.Contains(err.Error(), "s3cr3t") || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Error = %q", err)
	}
	var none *Scrubber
	if got := none.Text("https://u:p@h/"); got != "https://xxxxx@h/" {
		t.Errorf("a nil Scrubber: %q", got)
	}
}
