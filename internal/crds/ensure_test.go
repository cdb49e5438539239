package crds_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/crds"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// On a cluster without the CRD, Ensure installs it and waits until it is
// Established; then finds it current and writes nothing; a CRD of other
// generated files is replaced, unless the caller may not write CRDs: then
// the error names the permission and the fix, and nothing changes; a
// caller that may not even read CRDs is told Ensure could not check.
func TestEnsure(t *testing.T) {
	c := testenv.Cluster(t)
	admin, err := apiextensionsclient.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	crdAPI := admin.ApiextensionsV1().CustomResourceDefinitions()
	want, err := crd.Get(crd.UpgradeRuns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crdAPI.Get(ctx, crd.UpgradeRuns, metav1.GetOptions{}); err == nil {
		t.Fatal("the CRD is installed before the test: it proves nothing")
	}

	if cur, err := crds.IsCurrent(ctx, admin, crd.UpgradeRuns); cur || err != nil {
		t.Fatalf("IsCurrent without the CRD = %v, %v; want false", cur, err)
	}

	got, err := crds.Ensure(ctx, admin, crd.UpgradeRuns)
	if err != nil || got != crds.Installed || got.Notice(crd.UpgradeRuns) != "installed CRD upgraderuns.upshift.dev" {
		t.Fatalf("Ensure on a cluster without the CRD = %q, %v; want installed", got, err)
	}
	installed, err := crdAPI.Get(ctx, crd.UpgradeRuns, metav1.GetOptions{})
	if err != nil || !crds.Established(installed) || installed.Annotations[crd.AnnotationDigest] != want.Annotations[crd.AnnotationDigest] {
		t.Fatalf("after Ensure: %v, established %v, digest %q", err, err == nil && crds.Established(installed), installed.Annotations[crd.AnnotationDigest])
	}
	if m := installed.ManagedFields; len(m) == 0 || m[0].Manager != "upshift" {
		t.Errorf("managed fields %v, want the upshift field manager", m)
	}

	got, err = crds.Ensure(ctx, admin, crd.UpgradeRuns)
	again, _ := crdAPI.Get(ctx, crd.UpgradeRuns, metav1.GetOptions{})
	if err != nil || got != crds.Current || got.Notice(crd.UpgradeRuns) != "" || again.ResourceVersion != installed.ResourceVersion {
		t.Fatalf("Ensure of a current CRD = %q, %v (version %s, was %s); want current, nothing written", got, err, again.ResourceVersion, installed.ResourceVersion)
	}

	if cur, err := crds.IsCurrent(ctx, admin, crd.UpgradeRuns); !cur || err != nil {
		t.Fatalf("IsCurrent of the installed CRD = %v, %v; want true", cur, err)
	}

	// An older CRD: the digest of other files.
	patch := []byte(`{"metadata":{"annotations":{"` + crd.AnnotationDigest + `":"sha256:older"}}}`)
	if _, err := crdAPI.Patch(ctx, crd.UpgradeRuns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if cur, err := crds.IsCurrent(ctx, admin, crd.UpgradeRuns); cur || err != nil {
		t.Fatalf("IsCurrent of a CRD of other files = %v, %v; want false", cur, err)
	}
	reader := userClient(t, ctx, c.UserRESTConfig, cs, "crd-reader", []string{"get", "list", "watch"})
	_, err = crds.Ensure(ctx, reader, crd.UpgradeRuns)
	if !errors.Is(err, crds.ErrForbidden) || !apierrors.IsForbidden(err) {
		t.Fatalf("Ensure by a reader of an older CRD = %v, want ErrForbidden wrapping the API's Forbidden (which is not retried)", err)
	}
	for _, part := range []string{"patch customresourcedefinitions.apiextensions.k8s.io", "upshift crds | kubectl apply -f -", "nothing was changed", crd.UpgradeRuns} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the refusal lacks %q: %v", part, err)
		}
	}
	if cur, _ := crdAPI.Get(ctx, crd.UpgradeRuns, metav1.GetOptions{}); cur.Annotations[crd.AnnotationDigest] != "sha256:older" {
		t.Errorf("the refused Ensure changed the CRD")
	}
	nobody := userClient(t, ctx, c.UserRESTConfig, cs, "crd-nobody", nil)
	if got, err := crds.Ensure(ctx, nobody, crd.UpgradeRuns); got != crds.Unchecked || err != nil {
		t.Errorf("Ensure by a user who may not read CRDs = %q, %v; want unchecked", got, err)
	}

	got, err = crds.Ensure(ctx, admin, crd.UpgradeRuns)
	if err != nil || got != crds.Updated {
		t.Fatalf("Ensure of an older CRD = %q, %v; want updated", got, err)
	}
	if cur, _ := crdAPI.Get(ctx, crd.UpgradeRuns, metav1.GetOptions{}); cur.Annotations[crd.AnnotationDigest] != want.Annotations[crd.AnnotationDigest] || !crds.Established(cur) {
		t.Errorf("after the update: digest %q, established %v", cur.Annotations[crd.AnnotationDigest], crds.Established(cur))
	}
}

// userClient is a client of a user who may do verbs on CRDs (nothing when
// verbs is empty).
func userClient(t *testing.T, ctx context.Context, userConfig func(string, ...string) (*rest.Config, error), cs kubernetes.Interface, user string, verbs []string) apiextensionsclient.Interface {
	t.Helper()
	if len(verbs) > 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: verbs}}}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := userConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of a new binding from its informers: wait
	// until it does.
	for deadline := time.Now().Add(10 * time.Second); len(verbs) > 0; time.Sleep(20 * time.Millisecond) {
		_, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.UpgradeRuns, metav1.GetOptions{})
		if !apierrors.IsForbidden(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("user %s still may not read CRDs: %v", user, err)
		}
	}
	return c
}
