package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/apiremovals"
)

// SlimCRD judges as the whole CRD does, for every check that reads one
// (kstatus, CRDEstablished, the stored-version checks), and drops the
// schemas: Liqo's CRDs at v1.0.0 against v1.1.0, under every status a
// wait meets.
func TestSlimCRDJudgesAsTheWholeCRD(t *testing.T) {
	files, err := filepath.Glob("../../test/bench/liqo/v1.0.0/crds/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("liqo CRDs: %v (%d files)", err, len(files))
	}
	cond := func(typ, st, reason string) apiextensionsv1.CustomResourceDefinitionCondition {
		return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.CustomResourceDefinitionConditionType(typ), Status: apiextensionsv1.ConditionStatus(st), Reason: reason}
	}
	statuses := map[string][]apiextensionsv1.CustomResourceDefinitionCondition{
		"none":        nil,
		"established": {cond("NamesAccepted", "True", ""), cond("Established", "True", "")},
		"installing":  {cond("NamesAccepted", "True", ""), cond("Established", "False", "Installing")},
		"clash":       {cond("NamesAccepted", "False", "MultipleNamesNotAllowed"), cond("Established", "False", "NotAccepted")},
	}
	for _, f := range files {
		var crd apiextensionsv1.CustomResourceDefinition
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		next := readUnstructured(t, strings.Replace(f, "v1.0.0", "v1.1.0", 1))
		for name, conds := range statuses {
			crd.Status.Conditions = conds
			crd.Status.AcceptedNames = crd.Spec.Names
			crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&crd)
			if err != nil {
				t.Fatal(err)
			}
			whole := &unstructured.Unstructured{Object: m}
			whole.SetAPIVersion("apiextensions.k8s.io/v1")
			whole.SetKind("CustomResourceDefinition")
			slim, err := SlimCRD(&crd)
			if err != nil {
				t.Fatal(err)
			}
			at := crd.Name + " " + name
			ws, err1 := status.Compute(whole)
			ss, err2 := status.Compute(slim)
			if err1 != nil || err2 != nil || ws.Status != ss.Status || ws.Message != ss.Message {
				t.Errorf("%s: kstatus %v %v on the whole CRD, %v %v on the slim one", at, ws, err1, ss, err2)
			}
			if CRDEstablished(whole) != CRDEstablished(slim) {
				t.Errorf("%s: CRDEstablished differs", at)
			}
			if apiremovals.ServedVersion(whole) != apiremovals.ServedVersion(slim) || apiremovals.StorageVersion(whole) != apiremovals.StorageVersion(slim) {
				t.Errorf("%s: served or storage version differs", at)
			}
			if w, s := apiremovals.DroppedStoredVersions(whole, next), apiremovals.DroppedStoredVersions(slim, next); len(w) != len(s) {
				t.Errorf("%s: stored versions dropped: %v on the whole CRD, %v on the slim one", at, w, s)
			}
			versions, _, _ := unstructured.NestedSlice(slim.Object, "spec", "versions")
			for _, v := range versions {
				if _, has := v.(map[string]any)["schema"]; has {
					t.Fatalf("%s: the slim CRD keeps a schema", at)
				}
			}
		}
	}
}

func readUnstructured(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
