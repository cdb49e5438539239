package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// portAttempts bounds the starts over a port taken between choosing and
// binding it; a second is almost always enough.
const portAttempts = 3

// portTakenError is a start that failed because a component could not
// bind the port chosen for it: another process took it in between.
type portTakenError struct {
	component string
	err       error
}

func (e *portTakenError) Error() string {
	return "a port was taken between choosing it and binding it: " + e.err.Error()
}

func (e *portTakenError) Unwrap() error { return e.err }

// errNotStopped marks a failed start whose processes could not all be
// stopped: their state must stay for `upshift cluster down` to find them.
var errNotStopped = errors.New("not every process of the failed start stopped")

// startOnFreePorts starts the cluster, and again on other ports when a
// component could not bind one: nothing of a start that failed so early is
// worth keeping. A requested API server port is kept; a start whose API
// server lost it is not repeated.
func startOnFreePorts(ctx context.Context, o Options, bins Binaries) (*Cluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := startOnce(ctx, o, bins)
		var taken *portTakenError
		if err == nil || !errors.As(err, &taken) || errors.Is(err, errNotStopped) {
			return c, err
		}
		requested := o.APIServerPort != 0 && taken.component == "kube-apiserver"
		if requested || attempt == portAttempts {
			return nil, fmt.Errorf("%w\nhint: %s", err, portHint(requested, attempt))
		}
		fmt.Fprintf(o.Progress, "%s could not bind its port (another process took it); starting cluster %q again on other ports (attempt %d of %d)\n",
			taken.component, o.Name, attempt+1, portAttempts)
		if rerr := removeClusterDir(o.Dir); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
	}
}

func portHint(requested bool, attempts int) string {
	if requested {
		return "the port given with --port was taken after it was checked: choose another --port, or stop what listens there"
	}
	return fmt.Sprintf("ports were taken on each of %d starts on fresh ports: run the command again", attempts)
}

// servesOwnCert checks that the process listening on a loopback port is
// the component that wrote certFile, its self-signed serving certificate:
// a bare connection would also succeed to another process that took the
// port.
func servesOwnCert(ctx context.Context, certFile string, port int) error {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return err // not written yet
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s holds no certificate", certFile)
	}
	d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return conn.Close()
}
