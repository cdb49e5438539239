package testenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/crds"
)

// UpstreamData is the folder of real upstream artifacts beside the
// project (../shared/data, see its README), or "" when it is absent (a
// user's fresh clone).
func UpstreamData() string {
	dir := filepath.Join(repoRoot(), "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// UpstreamFile is the path of rel in UpstreamData; it skips the test,
// saying why, when the folder is absent. why says what the file proves.
func UpstreamFile(t testing.TB, rel, why string) string {
	t.Helper()
	dir := UpstreamData()
	if dir == "" {
		t.Skipf("../shared/data (the real upstream artifacts) is absent: %s needs %s", why, rel)
	}
	return filepath.Join(dir, rel)
}

// InstallUpstreamCRD installs a CRD from UpstreamData as it is (never an
// edited copy) and waits until it is Established, so the API server
// validates what a test writes against the real schema.
func InstallUpstreamCRD(t testing.TB, cfg *rest.Config, rel, why string) {
	t.Helper()
	data, err := os.ReadFile(UpstreamFile(t, rel, why))
	if err != nil {
		t.Fatal(err)
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &def); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &def, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("install %s: %v", rel, err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, def.Name, metav1.GetOptions{})
		return err == nil && crds.Established(got), nil
	})
	if err != nil {
		t.Fatalf("CRD %s from %s is not Established: %v", def.Name, rel, errors.Unwrap(err))
	}
}
