package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// The files of the generated certificate in the state directory.
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
)

// TLSFiles are the certificate and key the server serves with.
type TLSFiles struct {
	Cert, Key string
	// Generated: Upshift made them (self-signed) in the state directory.
	Generated bool
}

// EnsureCertificate returns the certificate to serve: the given files, or
// a self-signed one for localhost, 127.0.0.1 and host, generated in dir
// on first start and kept, so clients that pinned it keep trusting it
// (regenerated only when it has expired or no longer names host).
func EnsureCertificate(dir, certPath, keyPath, host string) (TLSFiles, error) {
	if certPath != "" || keyPath != "" {
		if certPath == "" || keyPath == "" {
			return TLSFiles{}, errors.New("--tls-cert and --tls-key go together: give both, or neither for a self-signed certificate")
		}
		if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
			return TLSFiles{}, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		return TLSFiles{Cert: certPath, Key: keyPath}, nil
	}
	files := TLSFiles{Cert: filepath.Join(dir, certFile), Key: filepath.Join(dir, keyFile), Generated: true}
	if usable(files, host) {
		return files, nil
	}
	var ips []net.IP
	var names []string
	if ip := net.ParseIP(host); ip != nil {
		ips = append(ips, ip)
	} else if host != "" {
		names = append(names, host)
	}
	// client-go's generator, as kube-apiserver's own self-signed
	// serving certificate: a CA and a serving certificate for 127.0.0.1
	// and localhost besides the names given.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", ips, names)
	if err != nil {
		return TLSFiles{}, fmt.Errorf("generate a self-signed certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return TLSFiles{}, err
	}
	if err := os.WriteFile(files.Key, keyPEM, 0o600); err != nil {
		return TLSFiles{}, err
	}
	if err := os.WriteFile(files.Cert, certPEM, 0o644); err != nil {
		return TLSFiles{}, err
	}
	return files, nil
}

// usable says the generated files exist, load, are valid for another
// day and name host.
func usable(f TLSFiles, host string) bool {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return false
	}
	return host == "" || leaf.VerifyHostname(host) == nil
}
