package lease

import (
	"os"
	"strings"
	"testing"
)

func TestIdentityString(t *testing.T) {
	tests := []struct {
		id   Identity
		want string
	}{
		{Identity{User: "alice", Host: "host-1", PID: 1234, Run: "demo-1.1.0"}, "alice@host-1 pid 1234 (run demo-1.1.0)"},
		{Identity{User: "alice", Host: "host-1", PID: 1234}, "alice@host-1 pid 1234"},
		{Identity{User: "kube-controller-manager_abc"}, "kube-controller-manager_abc"},
	}
	for _, tt := range tests {
		if got := tt.id.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// The holder's identity must survive the trip through the Lease, so a
// refusal names the right user, host, pid and run.
func TestHolderIdentityRoundTrip(t *testing.T) {
	for _, id := range []Identity{
		{User: "alice", Host: "host-1", PID: 1234, Run: "demo-1.1.0"},
		{User: "alice", Host: "host-1", PID: 1},
		{User: "alice@corp.example", Host: "build-7.corp.example", PID: 99, Run: "x"},
		{User: "Jane Doe", Host: "laptop", PID: 5, Run: "platform-2.0.0"},
	} {
		raw := holderIdentity(id, newNonce())
		if got := parseHolder(raw); got != id {
			t.Errorf("parseHolder(%q) = %#v, want %#v", raw, got, id)
		}
	}
}

func TestParseForeignHolder(t *testing.T) {
	for _, raw := range []string{"kube-scheduler_1f2e", "alice@host pid 12", "alice@host pid x [ab]"} {
		if got := parseHolder(raw); got != (Identity{User: raw}) || got.String() != raw {
			t.Errorf("parseHolder(%q) = %#v, want it whole in User", raw, got)
		}
	}
}

// Two Acquires in one process must not share an identity: client-go would
// take the second for a renewal of the first.
func TestHolderIdentitiesDifferPerAcquire(t *testing.T) {
	id := CurrentIdentity("demo")
	if a, b := holderIdentity(id, newNonce()), holderIdentity(id, newNonce()); a == b {
		t.Fatalf("two holder identities are equal: %q", a)
	}
}

func TestCurrentIdentity(t *testing.T) {
	id := CurrentIdentity("demo-1.1.0")
	host, _ := os.Hostname()
	if id.PID != os.Getpid() || id.Host != host || id.User == "" || id.Run != "demo-1.1.0" {
		t.Fatalf("CurrentIdentity = %#v", id)
	}
	if !strings.HasSuffix(id.String(), " (run demo-1.1.0)") {
		t.Fatalf("String() = %q", id.String())
	}
}
