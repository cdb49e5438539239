package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Role is what a token allows.
type Role string

// The roles.
const (
	Admin  Role = "admin"
	Viewer Role = "viewer"
)

// The keys of a password Secret.
const (
	SecretKeyPassword       = "password"
	SecretKeyViewerPassword = "viewerPassword"
)

// Passwords are the passwords that log in, per role. Only digests are
// kept, so comparisons take the same time whatever the length.
type Passwords struct {
	admin, viewer []byte // sha256 digests; viewer nil when none
}

// ErrWrongPassword: no role has this password.
var ErrWrongPassword = errors.New("wrong password")

// NewPasswords takes the passwords; viewer may be empty (no read-only
// login). An admin password shorter than 8 characters is refused.
func NewPasswords(admin, viewer string) (*Passwords, error) {
	admin, viewer = strings.TrimRight(admin, "\r\n"), strings.TrimRight(viewer, "\r\n")
	if len(admin) < 8 {
		return nil, errors.New("the admin password is shorter than 8 characters: choose a longer one")
	}
	if viewer != "" && viewer == admin {
		return nil, errors.New("the viewer password equals the admin password: a viewer would log in as admin; choose another")
	}
	p := &Passwords{admin: digest(admin)}
	if viewer != "" {
		p.viewer = digest(viewer)
	}
	return p, nil
}

// Source gives the passwords in force now.
type Source interface {
	Current() (*Passwords, error)
}

// Current makes fixed passwords a Source (those of a Secret, read at
// start).
func (p *Passwords) Current() (*Passwords, error) { return p, nil }

// Files are passwords kept in files, read again on every use: a password
// changed in its file takes effect at once, and (see Tokens) refuses the
// tokens issued before. The files are a few bytes.
type Files struct {
	admin, viewer string
	mu            sync.Mutex
	raw           string
	cur           *Passwords
}

// WatchFiles reads the password files (viewerFile may be "") now, and
// again on every Current.
func WatchFiles(adminFile, viewerFile string) (*Files, error) {
	f := &Files{admin: adminFile, viewer: viewerFile}
	_, err := f.Current()
	return f, err
}

// Current reads the files; unchanged content gives the same passwords.
// A file that cannot be read or holds a refused password is an error
// (nobody logs in) rather than the old password still working.
func (f *Files) Current() (*Passwords, error) {
	admin, err := os.ReadFile(f.admin)
	if err != nil {
		return nil, fmt.Errorf("--password-file: %w", err)
	}
	var viewer []byte
	if f.viewer != "" {
		if viewer, err = os.ReadFile(f.viewer); err != nil {
			return nil, fmt.Errorf("--viewer-password-file: %w", err)
		}
	}
	raw := string(admin) + "\x00" + string(viewer)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur != nil && raw == f.raw {
		return f.cur, nil
	}
	p, err := NewPasswords(string(admin), string(viewer))
	if err != nil {
		return nil, err
	}
	f.raw, f.cur = raw, p
	return p, nil
}

// PasswordsFromSecret reads keys password and viewerPassword (optional)
// of a Secret.
func PasswordsFromSecret(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*Passwords, error) {
	s, err := cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// The operator's next step is to create it: say how, with the keys.
		return nil, fmt.Errorf("--password-secret %s/%s: %w; create it: kubectl create secret generic %s -n %s --from-file=%s=ADMIN_FILE [--from-file=%s=VIEWER_FILE]",
			namespace, name, err, name, namespace, SecretKeyPassword, SecretKeyViewerPassword)
	}
	if err != nil {
		return nil, fmt.Errorf("--password-secret %s/%s: %w", namespace, name, err)
	}
	admin, ok := s.Data[SecretKeyPassword]
	if !ok {
		return nil, fmt.Errorf("--password-secret %s/%s has no key %q: add the admin password under it", namespace, name, SecretKeyPassword)
	}
	p, err := NewPasswords(string(admin), string(s.Data[SecretKeyViewerPassword]))
	if err != nil {
		return nil, fmt.Errorf("--password-secret %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

// Check returns the role the password logs in as.
func (p *Passwords) Check(password string) (Role, error) {
	d := digest(password)
	isAdmin := subtle.ConstantTimeCompare(d, p.admin) == 1
	isViewer := p.viewer != nil && subtle.ConstantTimeCompare(d, p.viewer) == 1
	switch {
	case isAdmin:
		return Admin, nil
	case isViewer:
		return Viewer, nil
	}
	return "", ErrWrongPassword
}

func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return bytes.Clone(d[:])
}
