package plugin

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Endpoint is where an ops plugin listens and how to trust it. TLS is
// the default: the plugin's certificate is verified against CA (the
// system's roots when CA is empty) and, with Cert and Key, the client
// presents its own (mutual TLS). Insecure is plaintext, and only when
// asked: it cannot be combined with TLS material.
type Endpoint struct {
	// Address is host:port (a DNS name or an IP).
	Address string
	// Insecure talks plaintext, as the multicluster operator's
	// opsEndpoint.insecure does.
	Insecure bool
	// CA, Cert and Key are PEM.
	CA, Cert, Key []byte
	// ServerName is the name the plugin's certificate must carry, when
	// it is not the address's host.
	ServerName string
}

func (ep Endpoint) validate() error {
	if ep.Address == "" {
		return errors.New("plugin endpoint: no address: give host:port")
	}
	if !ep.Insecure {
		return nil
	}
	var tlsFields []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"CA", len(ep.CA) > 0}, {"Cert", len(ep.Cert) > 0}, {"Key", len(ep.Key) > 0}, {"ServerName", ep.ServerName != ""}} {
		if f.set {
			tlsFields = append(tlsFields, f.name)
		}
	}
	if len(tlsFields) > 0 {
		return fmt.Errorf("plugin endpoint %s: Insecure with %s: choose one (Insecure talks plaintext; %s are for TLS)", ep.Address, strings.Join(tlsFields, ", "), strings.Join(tlsFields, ", "))
	}
	return nil
}

// credentials is the transport the endpoint asks for.
func (ep Endpoint) credentials() (credentials.TransportCredentials, error) {
	if err := ep.validate(); err != nil {
		return nil, err
	}
	if ep.Insecure {
		return insecure.NewCredentials(), nil
	}
	cfg, err := pluginsdk.ClientTLS(ep.CA, ep.Cert, ep.Key, ep.ServerName)
	if err != nil {
		return nil, fmt.Errorf("plugin endpoint %s: %w", ep.Address, err)
	}
	return credentials.NewTLS(cfg), nil
}

// key identifies the connection an endpoint needs: the same address with
// other TLS material is another connection. The material is digested so
// keys do not hold private keys.
func (ep Endpoint) key() string {
	h := sha256.New()
	for _, b := range [][]byte{ep.CA, ep.Cert, ep.Key, []byte(ep.ServerName)} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
		h.Write(b)
	}
	return fmt.Sprintf("%s|%t|%s", ep.Address, ep.Insecure, hex.EncodeToString(h.Sum(nil)))
}
