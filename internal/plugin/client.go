// Package plugin is Upshift's client of ops plugins: the gRPC services of
// pkg/pluginsdk (the multicluster upgrade operator's plugin.Cluster, and
// upshift.ops.v1.Ops when the plugin serves it), with deadlines, retries
// of reads, TLS by default, one connection per endpoint, and the
// operator's plugin-call metrics.
package plugin

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/util/wait"

	pluginpb "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// ErrPluginDown is wrapped by the error of a call the plugin did not
// answer (unreachable, or no answer within the deadline, after the
// retries of a read): the controller stops where it is and tries again
// later, instead of taking the silence for a failed operation.
var ErrPluginDown = errors.New("the ops plugin does not answer")

// ErrUnsupported is wrapped by the error of Describe, Wait or Revert when
// the plugin does not serve that upshift.ops.v1 method: the caller falls
// back to the plugin.Cluster calls.
var ErrUnsupported = errors.New("the ops plugin does not serve this call")

// Options tune a Client; the zero value is the defaults.
type Options struct {
	// CallTimeout bounds each attempt of a call (default 10 s).
	CallTimeout time.Duration
	// WaitTimeout is how long Wait waits at most (default 1 min); its
	// call's deadline is that plus CallTimeout, for the answer.
	WaitTimeout time.Duration
	// Backoff spaces the retries of reads; Steps is how many retries.
	// The zero value is the default (3 retries after 250 ms, 500 ms and
	// 1 s, with 20% jitter); Steps -1 never retries.
	Backoff wait.Backoff
	// DialOptions are added to the connection's own.
	DialOptions []grpc.DialOption
}

const (
	defaultCallTimeout = 10 * time.Second
	defaultWaitTimeout = time.Minute
	// idleTimeout closes the transport of a connection unused this long;
	// the next call opens it again.
	idleTimeout = 5 * time.Minute
)

var defaultBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 3}

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = defaultCallTimeout
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = defaultWaitTimeout
	}
	if o.Backoff == (wait.Backoff{}) {
		o.Backoff = defaultBackoff
	}
	return o
}

// Client calls one ops plugin. It implements pluginsdk.Cluster; Describe,
// Wait and Revert are upshift.ops.v1's, answering ErrUnsupported for a
// plugin that does not serve them. It is safe for concurrent use.
type Client struct {
	address string
	opts    Options
	conn    *grpc.ClientConn
	cluster pluginpb.ClusterClient
	ops     opsv1.OpsClient
	// pooled clients are closed by their Pool, not by Close.
	pooled bool

	// Set on the first Unimplemented of each upshift.ops.v1 method, so a
	// plugin that lacks one is asked once.
	noDescribe, noWait, noRevert, noFind atomic.Bool
	// caps, once asked (Capabilities).
	capsMu sync.Mutex
	caps   *Capabilities
}

// Dial makes a client of the plugin at ep. It does not connect: the
// connection is made on the first call and made again when lost, so a
// plugin that is down fails calls (ErrPluginDown), not Dial. Dial fails
// on an endpoint it cannot use (no address, Insecure with TLS material,
// unreadable PEM).
func Dial(ep Endpoint, opts Options) (*Client, error) {
	creds, err := ep.credentials()
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	dialOpts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Which calls are retried is this package's choice, per method:
		// a service config from DNS must not add retries, which would
		// re-send mutations.
		grpc.WithDisableServiceConfig(),
		grpc.WithIdleTimeout(idleTimeout),
	}, opts.DialOptions...)
	conn, err := grpc.NewClient(ep.Address, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("plugin endpoint %s: %w", ep.Address, err)
	}
	return &Client{
		address: ep.Address,
		opts:    opts,
		conn:    conn,
		cluster: pluginpb.NewClusterClient(conn),
		ops:     opsv1.NewOpsClient(conn),
	}, nil
}

// Address is the plugin's host:port.
func (c *Client) Address() string { return c.address }

// Close closes the connection. A Pool's clients are closed by the Pool:
// their Close does nothing.
func (c *Client) Close() error {
	if c.pooled {
		return nil
	}
	return c.conn.Close()
}
