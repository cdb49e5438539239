package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ECDSA P-256 keys: generating them takes microseconds where RSA 2048 takes
// tens of milliseconds each, and every component accepts them.

// certAuthority signs the cluster's serving and client certificates.
type certAuthority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// keyPair is a PEM-encoded certificate and key.
type keyPair struct{ CertPEM, KeyPEM []byte }

const certValidity = 365 * 24 * time.Hour

func newCA(commonName string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der)}, nil
}

// loadCA reads a CA written by writeCA, to mint more certificates later.
func loadCA(dir string) (*certAuthority, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read cluster CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("read cluster CA key: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("cluster CA in %s is not PEM", dir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse cluster CA: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse cluster CA key: %w", err)
	}
	return &certAuthority{cert: cert, key: key, certPEM: certPEM}, nil
}

func (ca *certAuthority) write(dir string) error {
	keyDER, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		return err
	}
	return writeKeyPair(dir, "ca", keyPair{CertPEM: ca.certPEM, KeyPEM: pemBlock("EC PRIVATE KEY", keyDER)})
}

// serving issues a server certificate for the given DNS names and IPs.
func (ca *certAuthority) serving(commonName string, dnsNames []string, ips []net.IP) (keyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// client issues a client certificate: the API server maps CN to the user
// name and O to the groups.
func (ca *certAuthority) client(user string, groups []string) (keyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *certAuthority) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate key: %w", err)
	}
	tmpl.SerialNumber = randomSerial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", keyDER)}, nil
}

// newServiceAccountKey returns the key pair the API server signs and checks
// service account tokens with.
func newServiceAccountKey() (privPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate service account key: %w", err)
	}
	privDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("EC PRIVATE KEY", privDER), pemBlock("PUBLIC KEY", pubDER), nil
}

func writeKeyPair(dir, name string, kp keyPair) error {
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM, 0o644); err != nil {
		return fmt.Errorf("write %s.crt: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), kp.KeyPEM, 0o600); err != nil {
		return fmt.Errorf("write %s.key: %w", name, err)
	}
	return nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
