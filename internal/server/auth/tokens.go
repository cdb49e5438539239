package auth

import (
	"crypto/rand"
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

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Issue makes a token for role.
func (t *Tokens) Issue(role Role) (string, time.Time, error) {
	now := t.now()
	exp := now.Add(t.ttl)
	c := claims{jwt.RegisteredClaims{
		Issuer: issuer, Subject: string(role),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.key)
	return s, exp, err
}

// ErrInvalidToken: the token is malformed, forged, of another issuer or
// expired.
var ErrInvalidToken = errors.New("invalid or expired token: log in again (POST /api/auth/login)")

// Verify returns the role of a valid token.
func (t *Tokens) Verify(token string) (Role, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer), jwt.WithExpirationRequired(), jwt.WithTimeFunc(t.now))
	if err != nil {
		return "", ErrInvalidToken
	}
	switch r := Role(c.Subject); r {
	case Admin, Viewer:
		return r, nil
	}
	return "", ErrInvalidToken
}
