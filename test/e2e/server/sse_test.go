package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runEvent is an SSE transition event.
type runEvent struct {
	id   int
	data struct {
		Summary struct {
			Name        string `json:"name"`
			Phase       string `json:"phase"`
			Stage       string `json:"stage"`
			Transitions int    `json:"transitions"`
			Waiting     *struct {
				Step string `json:"step"`
			} `json:"waiting"`
		} `json:"summary"`
		Stages []struct {
			Name  string `json:"name"`
			Phase string `json:"phase"`
		} `json:"stages"`
	}
}

// stream reads a run's events into a channel until ctx ends.
func (s *server) stream(ctx context.Context, run, token string) <-chan runEvent {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", s.url+"/api/runs/"+run+"/events", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := *s.client
	client.Timeout = 0 // a stream
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s.t.Fatalf("events of %s: %d %s", run, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan runEvent, 256)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev runEvent
		var kind string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id, _ = strconv.Atoi(strings.TrimPrefix(line, "id: "))
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && kind == "transition":
				out <- ev
				ev, kind = runEvent{}, ""
			}
		}
	}()
	return out
}

// until reads events until one satisfies cond, checking that ids never go
// back; it returns the events read.
func until(t *testing.T, events <-chan runEvent, what string, cond func(runEvent) bool) []runEvent {
	t.Helper()
	var seen []runEvent
	timeout := time.After(4 * time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before %s; events: %+v", what, seen)
			}
			if n := len(seen); n > 0 && ev.id < seen[n-1].id {
				t.Fatalf("event id %d after %d: out of order", ev.id, seen[n-1].id)
			}
			if ev.id != ev.data.Summary.Transitions {
				t.Fatalf("event id %d, but its run has %d transitions", ev.id, ev.data.Summary.Transitions)
			}
			seen = append(seen, ev)
			if cond(ev) {
				return seen
			}
		case <-timeout:
			t.Fatalf("no %s within 4 minutes; events: %+v", what, seen)
		}
	}
}
