package catalog

import (
	"context"
	"fmt"
	"sort"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/kubeconfig"
	"github.com/upshift-dev/upshift/internal/versions"
)

// PeerProblem is a peer whose version cannot be known: its Secret, its
// kubeconfig, its API server or its version sources. An upgrade cannot
// check skew against a peer it cannot read, so each one blocks.
type PeerProblem struct {
	Peer string
	// Secret is the namespace/name of the Secret holding its kubeconfig.
	Secret string
	Err    error
}

func (p PeerProblem) Error() string {
	if p.Secret == "" {
		return fmt.Sprintf("peer %s: %v", p.Peer, p.Err)
	}
	return fmt.Sprintf("peer %s (kubeconfig in Secret %s): %v", p.Peer, p.Secret, p.Err)
}

// ReadPeers reads every peer's version, as spec.peers says, through the
// kubeconfigs in the cluster's Secrets. Peers are sorted by name; a peer
// that cannot be read is a problem, not left out, and so is a peer the
// cluster knows (spec.peers.expected) that has no Secret, unless the
// catalog says to warn: then it is in unchecked.
func (c *Catalog) ReadPeers(ctx context.Context, cs *clients.Set) (peers []versions.Peer, problems []PeerProblem, unchecked []string, err error) {
	p := c.Spec.Peers
	if p == nil {
		return nil, nil, nil, nil
	}
	key := p.KubeconfigSecrets.Key
	if key == "" {
		key = DefaultKubeconfigKey
	}
	list, err := cs.Clientset.CoreV1().Secrets(p.KubeconfigSecrets.Namespace).List(ctx, metav1.ListOptions{LabelSelector: p.KubeconfigSecrets.Selector})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list the peers' kubeconfig Secrets in %s (spec.peers.kubeconfigSecrets): %w", p.KubeconfigSecrets.Namespace, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	detect := p.Detect
	if len(detect) == 0 {
		detect = c.Spec.Detect
	}
	for _, s := range list.Items {
		data, ok := s.Data[key]
		if !ok {
			continue // another Secret of the namespace
		}
		name := s.Name
		if n := s.Annotations[PeerNameAnnotation]; n != "" {
			name = n
		}
		v, err := readPeer(ctx, data, key, detect)
		if err != nil {
			problems = append(problems, PeerProblem{Peer: name, Secret: s.Namespace + "/" + s.Name, Err: err})
			continue
		}
		peers = append(peers, versions.Peer{Name: name, Version: v})
	}
	if p.Expected == nil {
		return peers, problems, nil, nil
	}
	missing, err := unreadPeers(ctx, cs, p.Expected, list.Items, key)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, id := range missing {
		if p.Expected.Missing == MissingWarn {
			unchecked = append(unchecked, id)
			continue
		}
		problems = append(problems, noSecretProblem(p, id, key))
	}
	return peers, problems, unchecked, nil
}

// readPeer reads a peer's version through the kubeconfig of its Secret's
// key. Whoever may write the Secret chose that kubeconfig: the CLI and
// the controller both read it, so it may not run a program, read a file
// or pick a proxy on their machine (kubeconfig.Untrusted).
func readPeer(ctx context.Context, data []byte, key string, detect []VersionSource) (*semver.Version, error) {
	cfg, err := kubeconfig.Untrusted(data)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", key, err)
	}
	cs, err := clients.New(cfg)
	if err != nil {
		return nil, err
	}
	return Agree(Detect(ctx, cs, detect))
}
