package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/upshift-dev/upshift/config/crd"
)

// `upshift crds` prints every embedded CRD as one YAML stream, each with
// the digest by which apply knows it as current, and needs no cluster.
func TestCRDsPrintsEveryCRD(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	out, _, err := run(t, "crds")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	var names []string
	for {
		var c apiextensionsv1.CustomResourceDefinition
		err := dec.Decode(&c)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the output is no YAML stream of CRDs: %v", err)
		}
		want, err := crd.Get(c.Name)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != "CustomResourceDefinition" || c.Annotations[crd.AnnotationDigest] == "" || c.Annotations[crd.AnnotationDigest] != want.Annotations[crd.AnnotationDigest] || len(c.Spec.Versions) == 0 {
			t.Errorf("printed %s %s, digest %q, %d versions", c.Kind, c.Name, c.Annotations[crd.AnnotationDigest], len(c.Spec.Versions))
		}
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "approllouts.upshift.dev clusterversions.upshift.dev platformupgrades.upshift.dev upgradeplans.upshift.dev upgraderuns.upshift.dev" {
		t.Errorf("printed CRDs %s, want AppRollout's, ClusterVersion's, PlatformUpgrade's, UpgradePlan's and UpgradeRun's", got)
	}
}
