package report

import (
	"strings"

	"github.com/upshift-dev/upshift/internal/redact"
)

// Request is what a multi-hop upgrade was asked for and the path solved
// for it: what the driver that runs the upgrade knows and the runs'
// records do not keep (each holds its own hop alone).
type Request struct {
	// From is the version the path starts from; "" for an install.
	From string
	// Target is the version asked for.
	Target string
	// Path are the versions the hops go to, in order: hop 1's first,
	// the hops resumed from an earlier upgrade included.
	Path []string
}

// NotRunOutcome is how the Markdown report shows a hop no run made.
const NotRunOutcome = "not run"

// HopNotRun is a hop of the path that no run made: the upgrade stopped
// before it.
type HopNotRun struct {
	// Hop numbers it in the path, from 1.
	Hop  int    `json:"hop"`
	From string `json:"from,omitempty"`
	To   string `json:"to"`
}

// redacted passes the request through redact.Text, as every text a
// report holds: versions come from a catalog a user wrote.
func (r Request) redacted() Request {
	out := Request{From: redact.Text(r.From), Target: redact.Text(r.Target), Path: make([]string, len(r.Path))}
	for i, v := range r.Path {
		out.Path[i] = redact.Text(v)
	}
	return out
}

// requestOfHops is what the hops' records tell of the request: the last
// hop's version stands for the target, and the hops for the path.
func requestOfHops(hops []Report) Request {
	req := Request{Target: UnknownVersion, Path: make([]string, len(hops))}
	for i, h := range hops {
		req.Path[i] = h.To
	}
	if len(hops) > 0 {
		req.From, req.Target = hops[0].From, hops[len(hops)-1].To
	}
	return req
}

// notRun are the hops of path past the first ran: each starts where the
// one before it goes (hop 1 from from).
func notRun(from string, path []string, ran int) []HopNotRun {
	var out []HopNotRun
	for i := ran; i < len(path); i++ {
		start := from
		if i > 0 {
			start = path[i-1]
		}
		out = append(out, HopNotRun{Hop: i + 1, From: start, To: path[i]})
	}
	return out
}

// sameVersion compares versions as a catalog ("v1.2.0") and a plan
// ("1.2.0") may write them.
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}
