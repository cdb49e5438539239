package lease

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strconv"
)

// Identity says who holds the lease, so a refusal can name it.
type Identity struct {
	User string
	Host string
	PID  int
	Run  string // the run the holder drives, if any
}

// String reads "alice@host-1 pid 1234 (run demo-1.1.0)". A holder that is
// not an Upshift process is shown as its raw holderIdentity (in User).
func (id Identity) String() string {
	if id.Host == "" && id.PID == 0 && id.Run == "" {
		return id.User
	}
	s := fmt.Sprintf("%s@%s pid %d", id.User, id.Host, id.PID)
	if id.Run != "" {
		s += " (run " + id.Run + ")"
	}
	return s
}

// CurrentIdentity is this process, driving run.
func CurrentIdentity(run string) Identity {
	id := Identity{User: currentUser(), Host: "unknown", PID: os.Getpid(), Run: run}
	if h, err := os.Hostname(); err == nil && h != "" {
		id.Host = h
	}
	return id
}

// currentUser falls back to $USER, then the uid, where the user database
// has no entry (containers with an arbitrary uid).
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}

// holderIdentity is what goes into the Lease: the readable identity and a
// nonce. client-go tells "still mine" by comparing identities, so two
// Acquires in one process (or a reused pid) must never look the same.
func holderIdentity(id Identity, nonce string) string {
	return id.String() + " [" + nonce + "]"
}

// holderRE parses holderIdentity back. The user is matched greedily up to
// the last "@": user names may contain one ("alice@corp"), host names not.
var holderRE = regexp.MustCompile(`^(.*)@([^@ ]*) pid (\d+)(?: \(run (.*)\))? \[[0-9a-f]+\]$`)

// parseHolder reads a Lease's holderIdentity; one that Upshift did not
// write comes back whole in User.
func parseHolder(s string) Identity {
	m := holderRE.FindStringSubmatch(s)
	if m == nil {
		return Identity{User: s}
	}
	pid, err := strconv.Atoi(m[3])
	if err != nil {
		return Identity{User: s}
	}
	return Identity{User: m[1], Host: m[2], PID: pid, Run: m[4]}
}

func newNonce() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
