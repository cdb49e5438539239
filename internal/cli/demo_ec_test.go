package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --crds takes the CRDs as kubectl exports them (a List), drops what the
// cluster they came from set, and names a CRD it lacks with how to get it.
func TestReadECCRDs(t *testing.T) {
	crd := func(name string) string {
		return `  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: ` + name + `, resourceVersion: "42", uid: 0f0e}
    spec:
      group: ` + name[strings.Index(name, ".")+1:] + `
      names: {kind: X, plural: ` + name[:strings.Index(name, ".")] + `}
      scope: Namespaced
      versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
    status: {storedVersions: [v1]}
`
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "crds.yaml")
	list := "apiVersion: v1\nkind: List\nitems:\n" + crd("plans.autopilot.k0sproject.io") + crd("clusterconfigs.k0s.k0sproject.io")
	if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readECCRDs(file); err == nil || !strings.Contains(err.Error(), "has no CustomResourceDefinition installations.embeddedcluster.replicated.com") ||
		!strings.Contains(err.Error(), "kubectl get crd") {
		t.Fatalf("a file without the Installation CRD: %v", err)
	}
	if err := os.WriteFile(file, []byte(list+crd("installations.embeddedcluster.replicated.com")), 0o600); err != nil {
		t.Fatal(err)
	}
	defs, err := readECCRDs(file)
	if err != nil || len(defs) != 3 {
		t.Fatalf("readECCRDs = %d CRDs, %v", len(defs), err)
	}
	for _, d := range defs {
		if d.ResourceVersion != "" || d.UID != "" || len(d.Status.StoredVersions) != 0 {
			t.Errorf("%s keeps what its cluster set: %+v", d.Name, d.ObjectMeta)
		}
	}
	if _, err := readECCRDs(""); err == nil || !strings.Contains(err.Error(), "--crds") {
		t.Errorf("no --crds: %v", err)
	}
}
