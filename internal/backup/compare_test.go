package backup

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
  annotations: {deployment.kubernetes.io/revision: "1"}
  resourceVersion: "100"
  uid: aaa
  generation: 1
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kubectl, operation: Update}]
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: web:1.0
        env: [{name: A, value: "1"}]
status:
  replicas: 2
`

func TestCompare(t *testing.T) {
	tests := []struct {
		name   string
		kind   string // base object: "deployment", "daemonset" or "secret"
		change func(u *unstructured.Unstructured)
		want   []string
	}{
		{name: "identical", change: func(*unstructured.Unstructured) {}},
		{name: "server-maintained fields ignored", change: func(u *unstructured.Unstructured) {
			u.SetResourceVersion("200")
			u.SetUID("bbb")
			u.SetGeneration(7)
			u.Object["metadata"].(map[string]any)["creationTimestamp"] = "2026-02-02T00:00:00Z"
			u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "upshift"}}
			u.Object["status"] = map[string]any{"replicas": int64(3), "observedGeneration": int64(7)}
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "5"})
		}},
		{name: "daemonset template generation ignored on a DaemonSet", kind: "daemonset", change: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "1", "deprecated.daemonset.template.generation": "4"})
		}},
		{name: "daemonset template generation reported on a Deployment", change: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "1", "deprecated.daemonset.template.generation": "4"})
		}, want: []string{`metadata.annotations["deprecated.daemonset.template.generation"] was <absent> is "4"`}},
		{name: "image changed", change: func(u *unstructured.Unstructured) {
			c := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["image"] = "web:2.0"
		}, want: []string{`spec.template.spec.containers[0].image was "web:1.0" is "web:2.0"`}},
		{name: "env entry added and label added", change: func(u *unstructured.Unstructured) {
			c := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["env"] = append(c["env"].([]any), map[string]any{"name": "B", "value": "2"})
			u.SetLabels(map[string]string{"app": "web", "changed": "yes"})
		}, want: []string{
			`metadata.labels.changed was <absent> is "yes"`,
			`spec.template.spec.containers[0].env[1] was <absent> is {"name":"B","value":"<redacted 1 bytes>"}`,
		}},
		{name: "field removed", change: func(u *unstructured.Unstructured) {
			delete(u.Object["spec"].(map[string]any), "replicas")
		}, want: []string{`spec.replicas was 2 is <absent>`}},
		{name: "number types compare by value", change: func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["replicas"] = float64(2)
		}},
		{name: "number value differs", change: func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["replicas"] = int64(3)
		}, want: []string{`spec.replicas was 2 is 3`}},
		{name: "empty annotations equal missing ones", change: func(u *unstructured.Unstructured) {
			u.SetAnnotations(nil)
		}},
		{name: "secret value change is reported redacted", kind: "secret", change: func(u *unstructured.Unstructured) {
			u.Object["data"].(map[string]any)["password"] = "b3RoZXItdmFsdWU=" // other-value
		}, want: []string{`data.password was "<redacted 12 bytes>" is "<redacted 11 bytes>"`}},
		{name: "secret key added is reported redacted", kind: "secret", change: func(u *unstructured.Unstructured) {
			u.Object["data"].(map[string]any)["tls.key"] = "c2VjcmV0"
		}, want: []string{`data["tls.key"] was <absent> is "<redacted 6 bytes>"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := obj(t, webDeployment)
			switch tt.kind {
			case "daemonset":
				base.SetKind("DaemonSet")
			case "secret":
				base = obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: demo}, data: {password: "czNjcjN0LXZhbHVl"}}`) // s3cr3t-value
			}
			live := base.DeepCopy()
			tt.change(live)
			got, notCompared := Compare(base, live)
			if notCompared != nil {
				t.Errorf("Compare: not compared %q, want none (no field changed owner)", notCompared)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Compare:\n got %q\nwant %q", got, tt.want)
			}
			for _, d := range got {
				for _, secret := range []string{"s3cr3t", "czNjcjN0", "other-value", "b3RoZXI"} {
					if strings.Contains(d, secret) {
						t.Errorf("difference %q shows a secret value", d)
					}
				}
			}
		})
	}
}

func TestCompareMissingObjects(t *testing.T) {
	d := obj(t, webDeployment)
	if got, _ := Compare(d, nil); len(got) != 1 || !strings.Contains(got[0], "is <absent>") {
		t.Errorf("Compare(obj, nil) = %q, want one 'is <absent>'", got)
	}
	if got, _ := Compare(nil, d); len(got) != 1 || !strings.Contains(got[0], "was <absent>") {
		t.Errorf("Compare(nil, obj) = %q, want one 'was <absent>'", got)
	}
	if got, _ := Compare(nil, nil); got != nil {
		t.Errorf("Compare(nil, nil) = %q, want none", got)
	}
}
