package lease

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// Defaults of Config.
const (
	DefaultName       = "upshift"
	DefaultDuration   = 10 * time.Second
	DefaultRenewEvery = 2 * time.Second
)

// Config says which Lease to take and how.
type Config struct {
	Namespace string
	Name      string // default "upshift"
	// Duration is how long the lease lasts without renewal: how long
	// others wait for a holder that died. Whole seconds (the Lease keeps
	// seconds). Default 10s.
	Duration time.Duration
	// RenewEvery is how often the holder renews. Default 2s.
	RenewEvery time.Duration
	Identity   Identity
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = DefaultRenewEvery
	}
	return c
}

// renewDeadline is how long the holder retries a failing renewal. A round
// starts one period after the last success, so the holder gives up at
// Duration - RenewEvery/2 after it: before anyone else may take over.
func (c Config) renewDeadline() time.Duration { return c.Duration - c.RenewEvery*3/2 }

// giveUp is how long after the last successful renewal the holder counts
// the lease as lost.
func (c Config) giveUp() time.Duration { return c.renewDeadline() + c.RenewEvery }

// validate checks what client-go's leader election requires, in terms of
// the --lease-duration and --lease-renew flags.
func (c Config) validate() error {
	switch {
	case c.Namespace == "":
		return errors.New("lease: namespace is required")
	case c.RenewEvery <= 0:
		return fmt.Errorf("--lease-renew %s: must be positive", c.RenewEvery)
	case c.Duration < time.Second || c.Duration%time.Second != 0:
		return fmt.Errorf("--lease-duration %s: must be a whole number of seconds (a Lease records seconds), at least 1s", c.Duration)
	}
	min := time.Duration(leaderelection.JitterFactor * float64(c.RenewEvery))
	if rd := c.renewDeadline(); rd <= min {
		need := (c.RenewEvery*3/2 + min).Truncate(time.Second) + time.Second
		return fmt.Errorf("--lease-duration %s is too short for --lease-renew %s: the holder retries a failing renewal for duration - 1.5 × renew (%s), which must exceed %.1f × renew (%s); use --lease-duration %s or more, or a shorter --lease-renew",
			c.Duration, c.RenewEvery, rd, leaderelection.JitterFactor, min, need)
	}
	return nil
}
