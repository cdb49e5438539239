package plugin

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// The pool gives one client, over one connection, per endpoint; other
// TLS material is another connection; Close closes them.
func TestPoolReusesConnection(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: lis}
	ca := plugintest.NewCA(t)
	addr := startPluginOn(t, counting, &fakePlugin{}, serverTLS(t, ca.Issue(t), nil))

	pool := NewPool(quick)
	ep := Endpoint{Address: addr, CA: ca.CertPEM}
	a, err := pool.Client(ep)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Client(Endpoint{Address: addr, CA: append([]byte(nil), ca.CertPEM...)})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("two clients for the same endpoint")
	}
	for i := 0; i < 3; i++ {
		if _, err := a.GetVersion(callCtx(t), "c1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ServiceOut(callCtx(t), "c1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil { // a pool's client: the pool closes it
		t.Fatal(err)
	}
	if _, err := b.GetVersion(callCtx(t), "c1"); err != nil {
		t.Errorf("after Close of a pooled client: %v", err)
	}
	if n := counting.accepted.Load(); n != 1 {
		t.Errorf("%d connections for one endpoint, want 1", n)
	}

	client := ca.Issue(t, "fleet")
	other, err := pool.Client(Endpoint{Address: addr, CA: ca.CertPEM, Cert: client.CertPEM, Key: client.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	if other == a {
		t.Error("the same client for other TLS material")
	}
	if _, err := other.GetVersion(callCtx(t), "c1"); err != nil {
		t.Fatal(err)
	}
	if n := counting.accepted.Load(); n != 2 {
		t.Errorf("%d connections for two endpoints, want 2", n)
	}

	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetVersion(callCtx(t), "c1"); err == nil {
		t.Error("a client answered after its pool closed")
	}
	if _, err := pool.Client(ep); err == nil {
		t.Error("a closed pool gave a client")
	}
}
