package plugin

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// A mutation carries its request id over the wire: sent again with it, the
// plugin answers with the operation it started (no second one), and
// FindOperation finds it; a request id that never reached the plugin is
// NotFound.
func TestRequestIDsFindTheirOperation(t *testing.T) {
	s, err := sim.New(sim.Config{Count: 1, Latency: map[string]time.Duration{sim.OpServiceOut: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	id := s.IDs()[0]
	c := dial(t, Endpoint{Address: startPlugin(t, s, pluginsdk.Insecure()), Insecure: true}, quick)
	if caps, err := c.Capabilities(callCtx(t)); err != nil || !caps.Find {
		t.Fatalf("Capabilities = %+v, %v: want Find", caps, err)
	}

	ctx := pluginsdk.WithRequestID(callCtx(t), "req-1")
	first, err := c.ServiceOut(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.ServiceOut(ctx, id)
	if err != nil || again != first {
		t.Errorf("ServiceOut sent again with its request id = %+v, %v; want the first operation %+v", again, err, first)
	}
	if n := s.Started(id, sim.OpServiceOut); n != 1 {
		t.Errorf("%d ServiceOut operations started, want 1", n)
	}
	found, err := c.Find(callCtx(t), id, "req-1")
	if err != nil || found != first {
		t.Errorf("Find(req-1) = %+v, %v; want %+v", found, err, first)
	}
	if _, err := c.Find(callCtx(t), id, "req-never-sent"); !pluginsdk.IsNoSuchRequest(err) {
		t.Errorf("Find(a request never sent) = %v, want NotFound", err)
	}
	// Without a request id, every call is its own.
	if _, err := c.ServiceIn(callCtx(t), id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServiceIn(callCtx(t), id); err != nil {
		t.Fatal(err)
	}
	if n := s.Started(id, sim.OpServiceIn); n != 2 {
		t.Errorf("%d ServiceIn operations started by two calls without request ids, want 2", n)
	}
}
