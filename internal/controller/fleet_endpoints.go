package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// endpointTTL is how long a fleet's plugin endpoint, with its TLS
// material, serves before its Secret is read again: a rotated certificate
// is used within this time. Read on every reconcile, the Secret cost a
// client and an impersonated round trip per step, a fifth of a busy
// rollout's controller time.
const endpointTTL = 30 * time.Second

// fleetEndpoints remembers each fleet's plugin endpoint as last read.
type fleetEndpoints struct {
	clients *impersonatedClients
	mu      sync.Mutex
	byKey   map[types.NamespacedName]endpointRead
}

type endpointRead struct {
	spec v1alpha1.OpsEndpoint
	sa   string
	ep   PluginEndpoint
	at   time.Time
}

func newFleetEndpoints(clients *impersonatedClients) *fleetEndpoints {
	return &fleetEndpoints{clients: clients, byKey: map[types.NamespacedName]endpointRead{}}
}

// of is the fleet's plugin endpoint with the TLS material of its Secret,
// read as the fleet's ServiceAccount when not read within endpointTTL or
// when the spec changed.
func (f *fleetEndpoints) of(ctx context.Context, cv *v1alpha1.ClusterVersion) (PluginEndpoint, error) {
	key := types.NamespacedName{Namespace: cv.Namespace, Name: cv.Name}
	spec := *cv.Spec.OpsEndpoint.DeepCopy()
	f.mu.Lock()
	last, ok := f.byKey[key]
	f.mu.Unlock()
	if ok && last.sa == cv.Spec.ServiceAccountName && equality.Semantic.DeepEqual(last.spec, spec) && time.Since(last.at) < endpointTTL {
		return last.ep, nil
	}
	ep := PluginEndpoint{Address: spec.Endpoint, Insecure: spec.Insecure, ServerName: spec.ServerName}
	if ref := spec.TLSSecretRef; ref != nil {
		user := serviceAccountUser(cv.Namespace, cv.Spec.ServiceAccountName)
		cs, err := f.clients.as(user)
		if err != nil {
			return PluginEndpoint{}, err
		}
		s, err := cs.CoreV1().Secrets(cv.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return PluginEndpoint{}, fmt.Errorf("spec.opsEndpoint.tlsSecretRef: read Secret %s as %s: %w", ref.Name, user, err)
		}
		ep.CA, ep.Cert, ep.Key = s.Data["ca.crt"], s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	}
	f.mu.Lock()
	f.byKey[key] = endpointRead{spec: spec, sa: cv.Spec.ServiceAccountName, ep: ep, at: time.Now()}
	f.mu.Unlock()
	return ep, nil
}

// forget drops a deleted fleet's endpoint.
func (f *fleetEndpoints) forget(key types.NamespacedName) {
	f.mu.Lock()
	delete(f.byKey, key)
	f.mu.Unlock()
}
