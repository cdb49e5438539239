package lease

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" = valid
	}{
		{"defaults", Config{Namespace: "ns"}, ""},
		{"test timings", Config{Namespace: "ns", Duration: 2 * time.Second, RenewEvery: 500 * time.Millisecond}, ""},
		{"no namespace", Config{}, "namespace is required"},
		{"sub-second duration", Config{Namespace: "ns", Duration: 1500 * time.Millisecond, RenewEvery: 100 * time.Millisecond}, "--lease-duration 1.5s: must be a whole number of seconds"},
		{"negative renew", Config{Namespace: "ns", RenewEvery: -time.Second}, "--lease-renew -1s: must be positive"},
		{"duration too short for renew", Config{Namespace: "ns", Duration: 5 * time.Second, RenewEvery: 2 * time.Second}, "--lease-duration 5s is too short for --lease-renew 2s"},
		{"just long enough", Config{Namespace: "ns", Duration: 6 * time.Second, RenewEvery: 2 * time.Second}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.withDefaults().validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate() = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// The error for a too-short duration suggests one that validates.
func TestConfigValidateSuggestion(t *testing.T) {
	for _, renew := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 10 * time.Second} {
		err := Config{Namespace: "ns", Duration: time.Second, RenewEvery: renew}.validate()
		if err == nil {
			t.Fatalf("renew %s: 1s duration validated", renew)
		}
		i := strings.Index(err.Error(), "use --lease-duration ")
		if i < 0 {
			t.Fatalf("no suggestion in %q", err)
		}
		var sugg string
		rest := err.Error()[i+len("use --lease-duration "):]
		sugg = rest[:strings.Index(rest, " ")]
		d, perr := time.ParseDuration(sugg)
		if perr != nil {
			t.Fatalf("suggestion %q: %v", sugg, perr)
		}
		if err := (Config{Namespace: "ns", Duration: d, RenewEvery: renew}).validate(); err != nil {
			t.Errorf("suggested --lease-duration %s with --lease-renew %s does not validate: %v", d, renew, err)
		}
		if err := (Config{Namespace: "ns", Duration: d - time.Second, RenewEvery: renew}).validate(); err == nil && d > time.Second {
			t.Errorf("suggested --lease-duration %s with --lease-renew %s is not the least that validates", d, renew)
		}
	}
}

// A holder that cannot renew must count the lease lost before anyone else
// may take it over.
func TestGiveUpBeforeExpiry(t *testing.T) {
	for _, c := range []Config{{Namespace: "ns"}, {Namespace: "ns", Duration: 2 * time.Second, RenewEvery: 500 * time.Millisecond}} {
		c = c.withDefaults()
		if c.giveUp() >= c.Duration {
			t.Errorf("duration %s, renew %s: gives up after %s, not before the lease expires", c.Duration, c.RenewEvery, c.giveUp())
		}
	}
}
