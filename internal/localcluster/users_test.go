package localcluster_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A minted user has no rights until RBAC grants them, its group is honoured,
// and the audit log tells its requests apart from the admin's.
func TestNamedUserIsBoundByRBACAndAudited(t *testing.T) {
	c := startTied(t, "users")
	ctx := ctxFor(t, time.Minute)
	cfg, err := c.UserRESTConfig("alice", "team-a")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice without RBAC: err = %v, want Forbidden", err)
	}
	admin := clientset(t, c)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}}
	if _, err := admin.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-a-reads", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "team-a"}}}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The RBAC authorizer learns of the binding through its informers: a
	// grant takes effect within moments, not at once.
	for {
		_, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsForbidden(err) || ctx.Err() != nil {
			t.Fatalf("alice via group team-a: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := alice.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice create: err = %v, want Forbidden (only list was granted)", err)
	}

	// The audit log is written asynchronously by the API server's backend.
	deadline := time.Now().Add(10 * time.Second)
	for {
		verbs := auditedVerbs(t, c.AuditLogPath(), "alice", "configmaps")
		if verbs["list"] >= 2 && verbs["create"] >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log lacks alice's requests: %v", verbs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// auditedVerbs counts the audit events of user on resource, by verb.
func auditedVerbs(t *testing.T, path, user, resource string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), user) {
			continue
		}
		var ev struct {
			Verb      string                    `json:"verb"`
			Stage     string                    `json:"stage"`
			User      struct{ Username string } `json:"user"`
			ObjectRef struct{ Resource string } `json:"objectRef"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.User.Username == user && ev.ObjectRef.Resource == resource && ev.Stage == "ResponseComplete" {
			counts[ev.Verb]++
		}
	}
	return counts
}
