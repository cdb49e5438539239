package localcluster

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig that authenticates by client
// certificate, with the certificates embedded so the file stands alone.
func writeKubeconfig(path, clusterName, server string, caPEM []byte, user string, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	ctxName := clusterName
	if user != AdminUser {
		ctxName = user + "@" + clusterName
	}
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	cfg.CurrentContext = ctxName
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	// Written aside and renamed into place: tests sharing a cluster ask
	// for the same user's kubeconfig while a process of another reads it,
	// and must never see it half written.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone already once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path) // CreateTemp made it 0600
}

// restConfigFromKubeconfig loads a kubeconfig file into a *rest.Config.
func restConfigFromKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	// The local cluster answers in milliseconds; client-side throttling
	// would only hide the engine's own latency in tests and benchmarks.
	cfg.QPS = 200
	cfg.Burst = 400
	return cfg, nil
}
