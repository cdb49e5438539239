//go:build bench

package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// runNamespace keeps Upshift's run records, backups and lease.
const runNamespace = "upshift-system"

// written is what one tool's writes weighed: request bodies as the audit
// log records them at Request level (JSON; a patch as sent), which is
// about what crossed the wire.
type written struct {
	bytes, writes int
	// byWhat sums per resource, and in Upshift's namespace per kind of
	// object too ("upgraderuns/status <run> in upshift-system", "secrets
	// upshift-src-* in upshift-system"): a change to how runs are stored
	// shows there whatever objects it introduces.
	byWhat map[string]*tally
	// record are the writes of the run's record (saved after every
	// transition); recordTook how long the API server took over each.
	record     tally
	recordTook []time.Duration
}

type tally struct{ writes, bytes, max int }

func (t *tally) add(n int) {
	t.writes++
	t.bytes += n
	if n > t.max {
		t.max = n
	}
}

// weigh sums the bodies of the writes among evs; record is the name of
// the run in runNamespace: its UpgradeRun (the resource and its status)
// or, before runs were UpgradeRuns, its Secret "upshift-run-<record>".
func weigh(evs []localcluster.AuditEvent, record string) written {
	w := written{byWhat: map[string]*tally{}}
	for _, e := range evs {
		if !e.IsWrite() {
			continue
		}
		n := len(e.RequestObject)
		w.bytes += n
		w.writes++
		what := writtenWhat(e)
		if w.byWhat[what] == nil {
			w.byWhat[what] = &tally{}
		}
		w.byWhat[what].add(n)
		if r := e.ObjectRef; r != nil && r.Namespace == runNamespace &&
			(r.Resource == "upgraderuns" && r.Name == record || r.Resource == "secrets" && r.Name == "upshift-run-"+record) {
			w.record.add(n)
			w.recordTook = append(w.recordTook, e.StageTimestamp.Sub(e.RequestReceivedTimestamp))
		}
	}
	return w
}

func writtenWhat(e localcluster.AuditEvent) string {
	r := e.ObjectRef
	if r == nil {
		return e.RequestURI
	}
	what := r.Resource
	if r.Subresource != "" {
		what += "/" + r.Subresource
	}
	if r.Namespace == runNamespace {
		what += " " + nameKind(r.Name) + " in " + runNamespace
	}
	return what
}

// nameKind is a name's first two words: "upshift-run-*",
// "upshift-backup-*".
func nameKind(name string) string {
	parts := strings.SplitN(name, "-", 3)
	if len(parts) < 3 {
		return name
	}
	return parts[0] + "-" + parts[1] + "-*"
}

// breakdown lists what was written, heaviest first.
func (w written) breakdown() string {
	whats := make([]string, 0, len(w.byWhat))
	for k := range w.byWhat {
		whats = append(whats, k)
	}
	sort.Slice(whats, func(i, j int) bool {
		a, b := w.byWhat[whats[i]], w.byWhat[whats[j]]
		if a.bytes != b.bytes {
			return a.bytes > b.bytes
		}
		return whats[i] < whats[j]
	})
	var b strings.Builder
	for _, k := range whats {
		t := w.byWhat[k]
		fmt.Fprintf(&b, "    %-55s %4d writes %10s (largest %s)\n", k, t.writes, size(t.bytes), size(t.max))
	}
	return b.String()
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
