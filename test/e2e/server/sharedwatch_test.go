package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestEventStreamsShareOneWatch: many clients following a run cost the
// API server nothing more: every stream is served from the server's one
// watch of the runs. Twelve streams are opened and closed while a hop
// runs; the audit log then holds far fewer finished watches of
// upgraderuns in the runs namespace than streams (those of the runner's
// own drive), where a watch per stream would leave at least twelve.
func TestEventStreamsShareOneWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	p := s.startWaiting(admin)

	const streams = 12
	ctx, cancel := context.WithCancel(e.ctx)
	all := make([]<-chan runEvent, streams)
	for i := range all {
		all[i] = s.stream(ctx, p.Waiting.Run, admin)
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+p.Waiting.Run+"/approve", admin, map[string]string{}, nil)
	for _, events := range all {
		until(t, events, "the run's end", func(ev runEvent) bool { return ev.data.Summary.Phase == "Succeeded" })
	}
	cancel()
	time.Sleep(2 * time.Second) // the closed streams' requests reach the audit log

	audit, err := testenvCluster(t).ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	watches := 0
	for _, ev := range audit {
		if ev.Verb == "watch" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "upgraderuns" && ev.ObjectRef.Namespace == e.runsNS {
			watches++
		}
	}
	if watches >= streams {
		t.Errorf("%d finished watches of upgraderuns in %s for %d streams: the streams do not share the server's watch", watches, e.runsNS, streams)
	}
	t.Logf("%d streams, %d finished watches of upgraderuns", streams, watches)
}
