//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// readWays is how many times each way of reading the CRDs is timed.
const readWays = 15

// How the first stage's backup could read a platform's 28 CRDs (1.5 MB
// of JSON) from the API server's cache: the way Upshift does (GETs,
// eight at a time, each decoded), and the ways that look cheaper. The
// backup, and preflight's stored-version check, wait for these reads;
// on two cores shared with the API server they are the longest wait
// before the first change. Each way's median of 15, against the way
// Upshift reads in the same run.
func TestCRDReadWays(t *testing.T) {
	root := repoRoot()
	c, err := testenv.StartTied(localcluster.Options{Name: "bench-crd-reads"})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer c.Stop()
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 1000
	names := installCRDs(t, cfg, filepath.Join(root, "test", "bench", "liqo", "v1.0.0", "crds"))
	ctx := context.Background()
	rc := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient()

	proto := rest.CopyConfig(cfg)
	proto.ContentType = "application/vnd.kubernetes.protobuf"
	proto.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	ax := apiextclient.NewForConfigOrDie(proto)

	const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	getEach := func(inFlight int, read func(name string) error) func() error {
		return func() error {
			var g errgroup.Group
			g.SetLimit(inFlight)
			for _, n := range names {
				g.Go(func() error { return read(n) })
			}
			return g.Wait()
		}
	}
	jsonGet := func(decode bool) func(string) error {
		return func(n string) error {
			raw, err := rc.Get().AbsPath(path, n).Param("resourceVersion", "0").Do(ctx).Raw()
			if err != nil || !decode {
				return err
			}
			return (&unstructured.Unstructured{}).UnmarshalJSON(raw)
		}
	}
	ways := []struct {
		name string
		read func() error
	}{
		{"GETs, 8 at a time, decoded (Upshift; the baseline)", getEach(8, jsonGet(true))},
		{"GETs, 8 at a time, not decoded", getEach(8, jsonGet(false))},
		{"GETs, all 28 at once, decoded", getEach(len(names), jsonGet(true))},
		{"GETs as protobuf, 8 at a time, re-encoded as JSON for the backup", getEach(8, func(n string) error {
			crd, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				return err
			}
			crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
			_, err = json.Marshal(crd)
			return err
		})},
		{"one list, decoded", func() error {
			raw, err := rc.Get().AbsPath(path).Param("resourceVersion", "0").Do(ctx).Raw()
			if err != nil {
				return err
			}
			return (&unstructured.UnstructuredList{}).UnmarshalJSON(raw)
		}},
	}
	// The API server settles after 28 new CRDs (it builds their
	// handlers and OpenAPI): one untimed round first, then the ways in
	// turn, round after round, so drift meets them all alike.
	took := make([][]time.Duration, len(ways))
	for round := range readWays + 1 {
		for i, w := range ways {
			start := time.Now()
			if err := w.read(); err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			if round > 0 {
				took[i] = append(took[i], time.Since(start))
			}
		}
	}
	var base time.Duration
	for i, w := range ways {
		slices.Sort(took[i])
		m := took[i][len(took[i])/2]
		if i == 0 {
			base = m
		}
		t.Logf("%-66s %8s  %.2f ×", w.name, m.Round(100*time.Microsecond), float64(m)/float64(base))
	}
}

// installCRDs creates every CRD in dir and returns their names.
func installCRDs(t *testing.T, cfg *rest.Config, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("CRDs in %s: %v", dir, err)
	}
	ax := apiextclient.NewForConfigOrDie(cfg)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), &crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	return names
}
