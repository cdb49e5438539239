package bundle

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	demoplatform "github.com/upshift-dev/upshift/examples/demo"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/source"
)

// The demo's 2.0.0 plan names directories, files, a local chart and a
// values file; bundled, it names none and is valid for the cluster, and
// the server hands out exactly what the files held, over TLS the CA
// verifies.
func TestBundleServesEveryFileThePlanNamed(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, demoplatform.FS); err != nil {
		t.Fatal(err)
	}
	l, err := plan.Load(filepath.Join(dir, "2.0.0", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Serve()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b, err := Make(context.Background(), l, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	srv.Publish(b.Files)
	if errs := plan.ValidateInCluster(b.Plan); len(errs) > 0 {
		t.Fatalf("the bundled plan is not valid in the cluster: %v", errs.ToAggregate())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CA)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	for i, st := range b.Plan.Spec.Stages {
		orig := l.Plan.Spec.Stages[i]
		for j, s := range st.Steps {
			o := orig.Steps[j]
			switch {
			case s.CRDs != nil:
				same(t, client, s.CRDs.URL, read(t, l, o.CRDs.Source))
			case s.Manifests != nil:
				same(t, client, s.Manifests.URL, read(t, l, o.Manifests.Source))
			case s.Job != nil:
				same(t, client, s.Job.URL, read(t, l, o.Job.Source))
				if o.Job.RollbackJob != nil {
					same(t, client, s.Job.RollbackJob.URL, read(t, l, *o.Job.RollbackJob))
				}
			case s.Helm != nil:
				want, err := helmx.FetchChart(context.Background(), helmx.ChartRef{Chart: o.Helm.Chart}, l.BaseDir)
				if err != nil {
					t.Fatal(err)
				}
				same(t, client, s.Helm.Chart, want)
				if len(s.Helm.ValuesFiles) != 0 || s.Helm.Values == nil {
					t.Errorf("step %s: values files not folded into values: %v", s.Name, s.Helm.ValuesFiles)
				}
				if !bytes.Contains(s.Helm.Values.Raw, []byte(`"replicas":2`)) {
					t.Errorf("step %s: the plan's inline values do not win over its files: %s", s.Name, s.Helm.Values.Raw)
				}
			}
		}
	}
}

func read(t *testing.T, l *plan.Loaded, src v1alpha1.Source) []byte {
	t.Helper()
	b, err := source.Read(context.Background(), src, source.Env{BaseDir: l.BaseDir})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func same(t *testing.T, c *http.Client, url string, want []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Errorf("GET %s: %s, %d bytes; want the %d bytes the plan's file held", url, resp.Status, len(got), len(want))
	}
}
