package testenv

import (
	"context"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/crds"
)

var (
	installedMu sync.Mutex
	installed   = map[string]bool{} // API server URLs whose CRDs are in
)

// InstallCRDs installs Upshift's CRDs (config/crd, as `upshift crds`
// prints them) on the cluster cfg points at and waits until they are
// Established; once per cluster and test process. Tests that use a bare
// run store need it: the CLI installs them itself before a run's first
// write.
func InstallCRDs(t testing.TB, cfg *rest.Config) {
	t.Helper()
	installedMu.Lock()
	defer installedMu.Unlock()
	if installed[cfg.Host] {
		return
	}
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, def := range all {
		if _, err := crds.Ensure(ctx, c, def.Name); err != nil {
			t.Fatalf("install CRD %s: %v", def.Name, err)
		}
	}
	installed[cfg.Host] = true
}
