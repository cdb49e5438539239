package auth

import (
	"errors"
	"os"
	"path/filepath"
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
	pw, _ := NewPasswords("admin-secret", "viewer-secret")
	s, exp, err := tok.Issue(Viewer, pw)
	if err != nil || !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("Issue: %v, expires %s", err, exp)
	}
	if r, e, err := tok.Verify(s, pw); err != nil || r != Viewer || !e.Equal(exp) {
		t.Fatalf("Verify = %q, %v", r, err)
	}
	// Expired.
	tok.Now = func() time.Time { return now.Add(time.Hour + time.Second) }
	if _, _, err := tok.Verify(s, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an expired token: %v", err)
	}
	tok.Now = func() time.Time { return now }
	// Signed with another key.
	other, _ := NewTokens([]byte(strings.Repeat("o", 32)), time.Hour)
	other.Now = tok.Now
	forged, _, _ := other.Issue(Admin, pw)
	if _, _, err := tok.Verify(forged, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of another key: %v", err)
	}
	// alg none, and an unknown role.
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "admin", "iss": issuer, "exp": now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, _, err := tok.Verify(none, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an unsigned token: %v", err)
	}
	root, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "root", "iss": issuer, "exp": now.Add(time.Hour).Unix()}).SignedString(key)
	if _, _, err := tok.Verify(root, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of an unknown role: %v", err)
	}
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "admin", "iss": issuer}).SignedString(key)
	if _, _, err := tok.Verify(noExp, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token without expiry: %v", err)
	}
}

// A token is refused once a password changes (the admin's or the
// viewer's) or the key is rotated, and is valid again with the same
// passwords and key.
func TestTokensEndWithPasswordOrKey(t *testing.T) {
	dir := t.TempDir()
	key, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := NewTokens(key, time.Hour)
	pw, _ := NewPasswords("admin-secret", "viewer-secret")
	s, _, _ := tok.Issue(Admin, pw)
	same, _ := NewPasswords("admin-secret\n", "viewer-secret")
	if _, _, err := tok.Verify(s, same); err != nil {
		t.Fatalf("the same passwords: %v", err)
	}
	for _, p := range [][2]string{{"admin-secret2", "viewer-secret"}, {"admin-secret", "viewer-other"}, {"admin-secret", ""}} {
		changed, _ := NewPasswords(p[0], p[1])
		if _, _, err := tok.Verify(s, changed); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("passwords changed to %q: %v", p, err)
		}
	}
	rotated, err := RotateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateKey(dir)
	if err != nil || string(again) != string(rotated) || string(rotated) == string(key) {
		t.Fatalf("the rotated key was not kept: %v", err)
	}
	tok2, _ := NewTokens(again, time.Hour)
	if _, _, err := tok2.Verify(s, pw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of the key before rotation: %v", err)
	}
}

// A password file changed while the server runs is the password from
// then on.
func TestWatchFiles(t *testing.T) {
	dir := t.TempDir()
	admin := filepath.Join(dir, "admin")
	if err := os.WriteFile(admin, []byte("admin-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := WatchFiles(admin, "")
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := f.Current()
	if p2, _ := f.Current(); p2 != p1 {
		t.Error("unchanged files gave other passwords")
	}
	if err := os.WriteFile(admin, []byte("admin-secret2"), 0o600); err != nil {
		t.Fatal(err)
	}
	p3, err := f.Current()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p3.Check("admin-secret"); err == nil {
		t.Error("the old password still logs in")
	}
	if r, err := p3.Check("admin-secret2"); err != nil || r != Admin {
		t.Errorf("the new password: %q, %v", r, err)
	}
	if err := os.WriteFile(admin, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Current(); err == nil {
		t.Error("a refused password in the file kept the old one working")
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
