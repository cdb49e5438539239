// Package plugintest helps test plugins and their clients: a throwaway
// certificate authority and the certificates it issues, in PEM, for TLS
// and mutual TLS over 127.0.0.1.
package plugintest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority that lives for one test.
type CA struct {
	// CertPEM is the CA's certificate: what a peer trusts.
	CertPEM []byte
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	serial  atomic.Int64
}

// Pair is an issued certificate and its private key, in PEM.
type Pair struct {
	CertPEM, KeyPEM []byte
}

// NewCA makes a CA valid for a day.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "plugintest CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("plugintest: CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("plugintest: CA certificate: %v", err)
	}
	ca := &CA{CertPEM: pemBlock("CERTIFICATE", der), cert: cert, key: key}
	ca.serial.Store(1)
	return ca
}

// Issue makes a certificate for names (IP addresses or DNS names;
// "localhost" and "127.0.0.1" when none), good for a server and for a
// client alike.
func (ca *CA) Issue(t testing.TB, names ...string) Pair {
	t.Helper()
	if len(names) == 0 {
		names = []string{"localhost", "127.0.0.1"}
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial.Add(1)),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("plugintest: certificate for %v: %v", names, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("plugintest: key for %v: %v", names, err)
	}
	return Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", keyDER)}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("plugintest: key: %v", err)
	}
	return key
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
