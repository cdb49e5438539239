package resolve

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Values merge as Flux merges a HelmRelease's: values files, then
// valuesFrom in order (a missing optional entry is skipped), then the
// inline values; maps merge key by key, anything else is replaced.
func TestHelmValuesMergeOrder(t *testing.T) {
	h := &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "c",
		ValuesFiles: []string{"base.yaml"},
		ValuesFrom: []v1alpha1.ValuesReference{
			{Kind: "ConfigMap", Name: "defaults"},
			{Kind: "Secret", Name: "absent", Optional: true},
			{Kind: "Secret", Name: "db"},
		},
		Values: &apiextensionsv1.JSON{Raw: []byte(`{"replicas":5}`)},
	}
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1", Stages: []v1alpha1.Stage{{
		Name: "s", Steps: []v1alpha1.Step{{Name: "pause", Pause: &v1alpha1.PauseStep{}}, {Name: "addon", Helm: h}},
	}}}}
	r, err := FromSources(p, map[string][]byte{
		HelmValuesPath(0, 1, 0):     []byte("replicas: 1\nimage: {tag: base, pullPolicy: IfNotPresent}\nfrom: file\n"),
		HelmValuesFromPath(0, 1, 0): []byte("replicas: 2\nimage: {tag: cm}\nfrom: configmap\nlevel: cm\n"),
		HelmValuesFromPath(0, 1, 2): []byte("image: {tag: secret}\nfrom: secret\ndb: {password: pw}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.helmValues(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"replicas": float64(5),                                                    // inline values win
		"image":    map[string]any{"tag": "secret", "pullPolicy": "IfNotPresent"}, // later valuesFrom over earlier, over the file
		"from":     "secret",
		"level":    "cm",
		"db":       map[string]any{"password": "pw"},
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Errorf("values = %v\nwant     %v", got, want)
	}
}

// normalize makes numbers comparable whatever their decoded type.
func normalize(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			out[k] = normalize(t)
		case int:
			out[k] = float64(t)
		case int64:
			out[k] = float64(t)
		default:
			out[k] = v
		}
	}
	return out
}
