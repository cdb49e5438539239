package pluginsdk

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// ServerTLS is a plugin's TLS configuration from its certificate and key
// (PEM). With clientCAPEM, clients must present a certificate signed by
// one of those CAs (mutual TLS); without, any client that trusts the
// plugin may call it.
func ServerTLS(certPEM, keyPEM, clientCAPEM []byte) (*tls.Config, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, errors.New("server TLS: certificate and key are both required (PEM)")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("server TLS: certificate and key: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if len(clientCAPEM) > 0 {
		pool, err := certPool("client CA", clientCAPEM)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ServerTLSFromFiles is ServerTLS from files; clientCAFile "" is no
// client authentication.
func ServerTLSFromFiles(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := readPEMFile("certificate", certFile)
	if err != nil {
		return nil, err
	}
	key, err := readPEMFile("key", keyFile)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if clientCAFile != "" {
		if ca, err = readPEMFile("client CA", clientCAFile); err != nil {
			return nil, err
		}
	}
	return ServerTLS(cert, key, ca)
}

// ClientTLS is the TLS configuration to call a plugin: it trusts caPEM
// (the system's roots when empty) and, with certPEM and keyPEM, presents
// that certificate (mutual TLS). serverName, when set, is the name the
// plugin's certificate must carry instead of the address's host.
func ClientTLS(caPEM, certPEM, keyPEM []byte, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caPEM) > 0 {
		pool, err := certPool("ca", caPEM)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("client certificate and key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case len(certPEM) > 0:
		return nil, errors.New("client certificate given without its key: give both for mutual TLS, or neither")
	case len(keyPEM) > 0:
		return nil, errors.New("client key given without its certificate: give both for mutual TLS, or neither")
	}
	return cfg, nil
}

// certPool holds every certificate of pemBytes, which must hold one.
func certPool(what string, pemBytes []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	found := false
	for rest := pemBytes; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		pool.AddCert(cert)
		found = true
	}
	if !found {
		return nil, fmt.Errorf("%s: no PEM certificate found", what)
	}
	return pool, nil
}

func readPEMFile(what, path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%s file: no path given", what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s file: %w", what, err)
	}
	return b, nil
}
