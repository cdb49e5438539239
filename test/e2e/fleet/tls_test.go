package fleet_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/sim"
)

// The controller talks to a plugin only over TLS it can verify: a
// plugin whose certificate comes from a CA the fleet's Secret does not
// hold is refused, and so is talking without a client certificate to a
// plugin that asks for one, and plain text to a TLS plugin (insecure
// works only where the plugin is insecure too, and only when set). Each
// refusal is the condition PluginReachable=False, naming the cause; with
// the right Secret the same fleet rolls.
func TestFleetTalksOnlyVerifiedTLS(t *testing.T) {
	t.Parallel()
	e := newMgmtEnv(t, 3*time.Minute, "fleet-tls", "fleet-tls-runs")
	ctx, dyn, ns := e.ctx, e.dyn, e.ns

	s := newSim(t, sim.Config{Count: 2, Version: "1.30.0"})
	addr, trusted, client := servePlugin(t, s)
	other := plugintest.NewCA(t)

	secrets := map[string]map[string][]byte{
		"right":          {"ca.crt": trusted.CertPEM, corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM},
		"untrusted":      {"ca.crt": other.CertPEM, corev1.TLSCertKey: client.CertPEM, corev1.TLSPrivateKeyKey: client.KeyPEM},
		"no-client-cert": {"ca.crt": trusted.CertPEM},
	}
	readableSecrets(t, ctx, e.cs, ns, secrets)
	startController(t, e.mgmt, ns, e.runs)

	apply := func(name string, ep v1alpha1.OpsEndpoint) {
		t.Helper()
		cv := &v1alpha1.ClusterVersion{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ClusterVersionKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       v1alpha1.ClusterVersionSpec{RequiredAvailableCount: 1, OpsEndpoint: ep},
		}
		for _, id := range s.IDs() {
			cv.Spec.Clusters = append(cv.Spec.Clusters, v1alpha1.FleetCluster{ID: id, Version: "1.31.0"})
		}
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
		delete(m, "status")
		data, _ := json.Marshal(m)
		force := true
		if _, err := dyn.Resource(clusterVersions).Namespace(ns).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "tls-test", Force: &force}); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
	}
	get := func(name string) *v1alpha1.ClusterVersion { return getClusterVersion(t, ctx, dyn, ns, name) }
	refused := func(name, why string) {
		t.Helper()
		var last string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			cv := get(name)
			if c := meta.FindStatusCondition(cv.Status.Conditions, fleet.ConditionPluginReachable); c != nil {
				last = string(c.Status) + ": " + c.Message
				if c.Status == metav1.ConditionFalse && strings.Contains(c.Message, why) {
					if cv.Status.Done != 0 || s.TotalCalls() != 0 {
						t.Errorf("%s: %d done, %d calls reached the plugin", name, cv.Status.Done, s.TotalCalls())
					}
					return
				}
			}
		}
		t.Fatalf("%s: PluginReachable is %q after a minute; want False saying %q", name, last, why)
	}

	tls := func(secret string) v1alpha1.OpsEndpoint {
		return v1alpha1.OpsEndpoint{Endpoint: addr, TLSSecretRef: &v1alpha1.LocalObjectName{Name: secret}}
	}
	apply("untrusted", tls("untrusted"))
	refused("untrusted", "certificate signed by unknown authority")
	apply("no-client-cert", tls("no-client-cert"))
	refused("no-client-cert", "certificate required")
	apply("plain-text", v1alpha1.OpsEndpoint{Endpoint: addr, Insecure: true})
	refused("plain-text", "the ops plugin does not answer")

	apply("untrusted", tls("right"))
	for deadline := time.Now().Add(time.Minute); get("untrusted").Status.Phase != v1alpha1.FleetSucceeded; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("with the right Secret the fleet did not roll within a minute: %+v", get("untrusted").Status)
		}
	}
	for _, id := range s.IDs() {
		v, _ := s.GetVersion(ctx, id)
		if v.Master != "1.31.0" {
			t.Errorf("%s runs %s, want 1.31.0", id, v.Master)
		}
	}
}
