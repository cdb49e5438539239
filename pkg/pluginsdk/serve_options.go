package pluginsdk

import (
	"crypto/tls"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	tls           *tls.Config
	tlsSet        bool
	insecure      bool
	serverOptions []grpc.ServerOption
}

// WithTLS serves over TLS with cfg (see ServerTLS; a config with client
// CAs that requires client certificates is mutual TLS).
func WithTLS(cfg *tls.Config) ServeOption {
	return func(c *serveConfig) { c.tls, c.tlsSet = cfg, true }
}

// Insecure serves plaintext. Only for a plugin reached over loopback or a
// network that encrypts already: anyone who reaches the port can take
// clusters out of service.
func Insecure() ServeOption {
	return func(c *serveConfig) { c.insecure = true }
}

// WithServerOptions adds gRPC server options (interceptors, limits); not
// credentials, which WithTLS and Insecure set.
func WithServerOptions(opts ...grpc.ServerOption) ServeOption {
	return func(c *serveConfig) { c.serverOptions = append(c.serverOptions, opts...) }
}

// credentials is the transport the options chose: TLS unless Insecure
// was asked, and never neither by default.
func (c *serveConfig) credentials() (credentials.TransportCredentials, error) {
	switch {
	case c.tlsSet && c.insecure:
		return nil, errors.New("pluginsdk.Serve: both WithTLS and Insecure given: choose one")
	case c.insecure:
		return insecure.NewCredentials(), nil
	case !c.tlsSet:
		return nil, errors.New("pluginsdk.Serve: no transport security: pass WithTLS(cfg) (build cfg with ServerTLS or ServerTLSFromFiles), or Insecure() for plaintext on loopback")
	case c.tls == nil:
		return nil, errors.New("pluginsdk.Serve: WithTLS(nil): build the config with ServerTLS or ServerTLSFromFiles")
	case len(c.tls.Certificates) == 0 && c.tls.GetCertificate == nil && c.tls.GetConfigForClient == nil:
		return nil, errors.New("pluginsdk.Serve: WithTLS: the config has no certificate: build it with ServerTLS or ServerTLSFromFiles")
	}
	return credentials.NewTLS(c.tls), nil
}
