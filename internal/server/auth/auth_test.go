package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestPasswords(t *testing.T) {
	p, err := NewPasswords("admin-secret\n", "viewer-secret")
	if err != nil {
		t.Fatal(err)
	}
	for pw, want := range map[string]Role{"admin-secret": Admin, "viewer-secret": Viewer} {
		if got, err := p.Check(pw); err != nil || got != want {
			t.Errorf("Check(%q) = %q, %v; want %q", pw, got, err, want)
		}
	}
	for _, pw := range []string{"", "admin-secret\n", "Admin-secret", "viewer"} {
		if _, err := p.Check(pw); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("Check(%q) = %v, want ErrWrongPassword", pw, err)
		}
	}
	if _, err := NewPasswords("short", ""); err == nil || !strings.Contains(err.Error(), "8 characters") {
		t.Errorf("a short password: %v", err)
	}
	if _, err := NewPasswords("same-password", "same-password"); err == nil {
		t.Error("a viewer password equal to the admin's was accepted")
	}
	noViewer, _ := NewPasswords("admin-secret", "")
	if _, err := noViewer.Check(""); err == nil {
		t.Error("the empty password logged in without a viewer password")
	}
}

func TestTokens(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tok, err := NewTokens(key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok.Now = func() time.Time { return now }
	s, exp, err := tok.Issue(Viewer)
	if err != nil || !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("Issue: %v, expires %s", err, exp)
	}
	if r, err := tok.Verify(s); err != nil || r != Viewer {
		t.Fatalf("Verify = %q, %v", r, err)
	}
	// Expired.
	tok.Now = func() time.Time { return now.Add(time.Hour + time.Second) }
	if _, err := tok.Verify(s); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an expired token: %v", err)
	}
	tok.Now = func() time.Time { return now }
	// Signed with another key.
	other, _ := NewTokens([]byte(strings.Repeat("o", 32)), time.Hour)
	other.Now = tok.Now
	forged, _, _ := other.Issue(Admin)
	if _, err := tok.Verify(forged); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of another key: %v", err)
	}
	// alg none, and an unknown role.
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "admin", "iss": issuer, "exp": now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := tok.Verify(none); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an unsigned token: %v", err)
	}
	root, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "root", "iss": issuer, "exp": now.Add(time.Hour).Unix()}).SignedString(key)
	if _, err := tok.Verify(root); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of an unknown role: %v", err)
	}
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "admin", "iss": issuer}).SignedString(key)
	if _, err := tok.Verify(noExp); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token without expiry: %v", err)
	}
}

func TestKeyPersists(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("the key changed across starts: %v", err)
	}
}
