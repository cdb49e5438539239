package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// issuer is the tokens' iss claim; a token of another issuer is refused.
const issuer = "upshift"

// keyFile is the signing key's file in the state directory.
const keyFile = "token-signing.key"

// Tokens issues and verifies the API's bearer tokens.
type Tokens struct {
	key []byte
	ttl time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// claims are a token's: the role in sub.
type claims struct {
	jwt.RegisteredClaims
}

// NewTokens signs with key (at least 32 bytes) tokens valid for ttl.
func NewTokens(key []byte, ttl time.Duration) (*Tokens, error) {
	if len(key) < 32 {
		return nil, errors.New("the token signing key is shorter than 32 bytes")
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("--token-ttl %s: give a positive duration", ttl)
	}
	return &Tokens{key: key, ttl: ttl}, nil
}

// LoadOrCreateKey reads the signing key of dir, creating it (32 random
// bytes, mode 0600) on first start.
func LoadOrCreateKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, keyFile)
	key, err := os.ReadFile(path)
	if err == nil {
		if len(key) < 32 {
			return nil, fmt.Errorf("%s holds %d bytes, fewer than 32: delete it and a new key is made (tokens issued before stop working)", path, len(key))
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// RotateKey replaces the signing key of dir with 32 new random bytes:
// every token signed before is refused from then on.
func RotateKey(dir string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// Written aside and renamed, so a crash leaves the old key or the
	// new one, never a part.
	tmp, err := os.CreateTemp(dir, keyFile+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, keyFile)); err != nil {
		return nil, err
	}
	return key, nil
}

// signingKey is the key tokens are signed with while the passwords are
// p: derived from both, so a changed password (admin's or viewer's)
// refuses every token issued before, as a rotated key does.
func (t *Tokens) signingKey(p *Passwords) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte("upshift token\x00"))
	m.Write(p.admin)
	m.Write(p.viewer)
	return m.Sum(nil)
}

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Issue makes a token for role, valid while the passwords are p.
func (t *Tokens) Issue(role Role, p *Passwords) (string, time.Time, error) {
	now := t.now()
	exp := now.Add(t.ttl)
	c := claims{jwt.RegisteredClaims{
		Issuer: issuer, Subject: string(role),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.signingKey(p))
	return s, exp, err
}

// ErrInvalidToken: the token is malformed, forged, of another issuer,
// expired, or issued before the passwords or the key changed.
var ErrInvalidToken = errors.New("invalid or expired token: log in again (POST /api/auth/login)")

// Verify returns the role and the expiry of a token valid while the
// passwords are p.
func (t *Tokens) Verify(token string, p *Passwords) (Role, time.Time, error) {
	var c claims
	key := t.signingKey(p)
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer), jwt.WithExpirationRequired(), jwt.WithTimeFunc(t.now))
	if err != nil {
		return "", time.Time{}, ErrInvalidToken
	}
	switch r := Role(c.Subject); r {
	case Admin, Viewer:
		return r, c.ExpiresAt.Time, nil
	}
	return "", time.Time{}, ErrInvalidToken
}
