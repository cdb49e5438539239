package install_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// release is one install of the chart.
type release struct {
	Name           string // the Helm release
	Namespace      string // the controller's namespace
	ServiceAccount string // the controller's ServiceAccount
	Fullname       string // the prefix of the chart's object names
}

// installChart installs charts/upshift with values into a new namespace,
// under a release name of its own (its ClusterRoles are named after it),
// and uninstalls it when the test ends. Helm installs the chart's CRDs
// first, as `helm install` does.
func installChart(t *testing.T, ctx context.Context, admin *rest.Config, values map[string]any) release {
	t.Helper()
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, cs, "install")
	name := "upshift-" + ns[strings.LastIndex(ns, "-")+1:]
	hc, err := helmx.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := hc.ActionConfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	chrt, err := loader.Load(filepath.Join(repoRoot, "charts", "upshift"))
	if err != nil {
		t.Fatalf("load charts/upshift: %v", err)
	}
	inst := action.NewInstall(cfg)
	inst.ReleaseName = name
	inst.Namespace = ns
	inst.Timeout = time.Minute
	if _, err := inst.RunWithContext(ctx, chrt, values); err != nil {
		t.Fatalf("helm install charts/upshift: %v", err)
	}
	t.Cleanup(func() {
		// Cluster-scoped objects outlive the namespace: uninstall.
		cfg, err := hc.ActionConfig(ns)
		if err != nil {
			t.Logf("uninstall %s: %v", name, err)
			return
		}
		un := action.NewUninstall(cfg)
		un.Timeout = 30 * time.Second
		if _, err := un.Run(name); err != nil {
			t.Logf("uninstall %s: %v", name, err)
		}
	})
	return release{Name: name, Namespace: ns, ServiceAccount: name + "-controller", Fullname: name}
}

// serviceAccountConfig returns a rest.Config that authenticates as
// ServiceAccount ns/name with a token from the TokenRequest API (what
// `kubectl create token` does), valid ten minutes, and nothing else of
// admin's credentials.
func serviceAccountConfig(t *testing.T, ctx context.Context, admin *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount was just created: retry briefly.
	var tok *authenticationv1.TokenRequest
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		tok, err = cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
		}, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil || tok.Status.Token == "" {
		t.Fatalf("create a token for ServiceAccount %s/%s: %v", ns, name, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tok.Status.Token
	return cfg
}

func ptr[T any](v T) *T { return &v }
