package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// olderVersion says resource version a was written before b. Resource
// versions are opaque, but etcd's are increasing integers, which the
// API server of every conformant cluster serves; any other form is
// never called older.
func olderVersion(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// keepAlive is how often an idle stream gets a comment line, so proxies
// and browsers do not close it.
const keepAlive = 15 * time.Second

// handleRunEvents streams a run's transitions as server-sent events: the
// run as it is first, then every change the shared watch sees, in order.
// The event id is status.transitions; a client reconnecting with
// Last-Event-ID gets only what is newer. A reader that lags gets the
// newest state, not every one in between (ids then skip).
func (s *Server) handleRunEvents(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, fmt.Errorf("the connection cannot stream"))
		return
	}
	// Subscribe before reading the run as it is, so no change falls in
	// between.
	changes, cancel := s.runs.subscribe(name)
	defer cancel()
	current := s.runs.get(s.cfg.Session.Namespace, name)
	if current == nil {
		// Not in the watch: a record of an earlier version, or none.
		var err error
		if _, current, err = s.getRun(r.Context(), name); err != nil {
			writeError(w, err)
			return
		}
	}
	last, version := -1, ""
	if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil {
		last = id
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush() // the client knows it is connected before the first change
	// The first event is the run as it is, even when the client saw its
	// transition (Last-Event-ID): an approval or an abort request changes
	// a run without a transition. After it, a change is sent when it is
	// newer than the last sent (a notification the watch delivers late
	// may be older than the run read first).
	first := true
	send := func(run *v1alpha1.UpgradeRun) error {
		n := run.Status.Transitions
		switch {
		case first:
			first = false
		case n < last, run.ResourceVersion == version, olderVersion(run.ResourceVersion, version):
			return nil
		}
		last, version = n, run.ResourceVersion
		st := redact.RunStatus(run.Status)
		b, err := json.Marshal(RunEvent{Summary: summary(run), Stages: st.Stages})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: transition\ndata: %s\n\n", n, b); err != nil {
			return err
		}
		flusher.Flush()
		return nil
	}
	if err := send(current); err != nil {
		return
	}
	s.followStream(w, r, changes, send)
}

// followStream sends changes until the client leaves, the server stops,
// or the caller's token stops being valid: at its expiry, or when a
// changed password refuses it (checked with each keep-alive). The last
// event, expired, says why the stream ends.
func (s *Server) followStream(w http.ResponseWriter, r *http.Request, changes <-chan *v1alpha1.UpgradeRun, send func(*v1alpha1.UpgradeRun) error) {
	flusher, _ := w.(http.Flusher)
	b, _ := r.Context().Value(tokenKey{}).(bearer)
	expiry := time.NewTimer(time.Until(b.expires))
	defer expiry.Stop()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	expired := func() {
		_, _ = fmt.Fprint(w, "event: expired\ndata: {\"message\":\"the token expired or was revoked: log in again (POST /api/auth/login)\"}\n\n")
		flusher.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streams.Done():
			return
		case <-expiry.C:
			expired()
			return
		case run := <-changes:
			if err := send(run); err != nil {
				return
			}
		case <-tick.C:
			if _, _, err := s.verify(b.token); err != nil {
				expired()
				return
			}
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
