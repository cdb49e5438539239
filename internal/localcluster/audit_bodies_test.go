package localcluster_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// TestAuditRequestBodiesOfNamedUsers: the writes of a user named in
// AuditRequestBodiesOf carry their body in the audit log, so a test can
// weigh them; the admin's writes and every read stay at Metadata level.
func TestAuditRequestBodiesOfNamedUsers(t *testing.T) {
	testenv.SkipIfShort(t)
	c, err := testenv.StartTied(localcluster.Options{Name: "bodies", Progress: testWriter{t}, AuditRequestBodiesOf: []string{"weighed"}})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	ctx := ctxFor(t, time.Minute)
	cfg, err := c.UserRESTConfig("weighed", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	weighed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("x", 10_000)
	for _, u := range []struct {
		cs   kubernetes.Interface
		name string
	}{{weighed, "by-weighed"}, {clientset(t, c), "by-admin"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: u.name, Namespace: "default"}, Data: map[string]string{"payload": payload}}
		if _, err := u.cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.cs.CoreV1().ConfigMaps("default").Get(ctx, u.name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		events, err := c.ReadAudit()
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int{}
		for _, e := range events {
			if e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Namespace == "default" {
				sizes[e.User.Username+" "+e.Verb] = len(e.RequestObject)
			}
		}
		_, adminCreate := sizes[localcluster.AdminUser+" create"]
		_, weighedGet := sizes["weighed get"]
		if adminCreate && weighedGet {
			if sizes["weighed create"] < len(payload) {
				t.Errorf("the named user's create carries %d bytes of body, want at least %d", sizes["weighed create"], len(payload))
			}
			if sizes[localcluster.AdminUser+" create"] != 0 || sizes["weighed get"] != 0 {
				t.Errorf("bodies recorded beyond the named user's writes: %v", sizes)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log lacks the requests: %v", sizes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
