package backup

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ownedDeployment is a Deployment snapshot whose fields "creator" set;
// spec.selector is atomic, containers and env are keyed by name, ports by
// containerPort and protocol.
const ownedDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    spec:
      containers:
      - name: web
        image: web:1.0
        env: [{name: A, value: "1"}]
        ports: [{containerPort: 80, protocol: TCP}]
`

// creatorFields is what "creator" owns in ownedDeployment.
const creatorFields = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},` +
	`"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},` +
	`"f:env":{".":{},"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},` +
	`"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}`

// entry is a managedFields entry of an Update.
func entry(manager, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
		APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)},
	}
}

func container(u *unstructured.Unstructured) map[string]any {
	return u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
}

const replicasField = `{"f:spec":{"f:replicas":{}}}`

// creatorWithout is creatorFields less one field, as the API server
// leaves it when another manager's Update takes that field.
func creatorWithout(t *testing.T, parts ...any) string {
	t.Helper()
	set := &fieldpath.Set{}
	if err := set.FromJSON(strings.NewReader(creatorFields)); err != nil {
		t.Fatal(err)
	}
	b, err := set.Difference(fieldpath.NewSet(fieldpath.MakePathOrDie(parts...))).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const imageField = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`

func TestCompareByFieldOwnership(t *testing.T) {
	withoutReplicas := creatorWithout(t, "spec", "replicas")
	withoutImage := creatorWithout(t, "spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "web"), "image")
	withoutSelector := creatorWithout(t, "spec", "selector")
	setReplicas := func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["replicas"] = int64(5) }
	setImage := func(u *unstructured.Unstructured) { container(u)["image"] = "web:2.0" }
	tests := []struct {
		name string
		// snapshotOwners replace the snapshot's managedFields (nil: creator only).
		snapshotOwners []metav1.ManagedFieldsEntry
		change         func(u *unstructured.Unstructured)
		liveOwners     []metav1.ManagedFieldsEntry
		want, wantNot  []string
	}{
		{
			name:       "replicas a new autoscaler set through the scale subresource",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutReplicas), entry("hpa", "scale", replicasField)},
			wantNot:    []string{"spec.replicas was 2 is 5: now managed by hpa (scale), not compared"},
		},
		{
			name:           "replicas an autoscaler that scaled before the stage set again",
			snapshotOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutReplicas), entry("hpa", "scale", replicasField)},
			change:         setReplicas,
			liveOwners:     []metav1.ManagedFieldsEntry{entry("creator", "", withoutReplicas), entry("hpa", "scale", replicasField)},
			wantNot:        []string{"spec.replicas was 2 is 5: now managed by hpa (scale), not compared"},
		},
		{
			name:       "a field a new manager took over",
			change:     setImage,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutImage), entry("operator", "", imageField)},
			wantNot:    []string{`spec.template.spec.containers[0].image was "web:1.0" is "web:2.0": now managed by operator, not compared`},
		},
		{
			name:       "a field its owner in the snapshot set to another value",
			change:     setImage,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields)},
			want:       []string{`spec.template.spec.containers[0].image was "web:1.0" is "web:2.0"`},
		},
		{
			name:       "replicas its owner in the snapshot set through the object, not the scale subresource",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields)},
			want:       []string{"spec.replicas was 2 is 5"},
		},
		{
			name:       "a field the restore owns that does not hold",
			change:     setImage,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutImage), entry("upshift-restore", "", imageField)},
			want:       []string{`spec.template.spec.containers[0].image was "web:1.0" is "web:2.0"`},
		},
		{
			name:       "a field an Upshift step took over",
			change:     setImage,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutImage), entry("upshift-image", "", imageField)},
			want:       []string{`spec.template.spec.containers[0].image was "web:1.0" is "web:2.0"`},
		},
		{
			name:       "replicas an Upshift manager set through the scale subresource",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutReplicas), entry("upshift", "scale", replicasField)},
			want:       []string{"spec.replicas was 2 is 5"},
		},
		{
			name:       "a removed field has no owner",
			change:     func(u *unstructured.Unstructured) { delete(u.Object["spec"].(map[string]any), "replicas") },
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutReplicas)},
			want:       []string{"spec.replicas was 2 is <absent>"},
		},
		{
			name:       "a field nobody owns",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{entry("operator", "", imageField)},
			want:       []string{"spec.replicas was 2 is 5"},
		},
		{
			name:       "a live object without managedFields: everything compared",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{},
			want:       []string{"spec.replicas was 2 is 5"},
		},
		{
			name:           "a snapshot without managedFields: everything compared",
			snapshotOwners: []metav1.ManagedFieldsEntry{},
			change:         setReplicas,
			liveOwners:     []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields), entry("hpa", "scale", replicasField)},
			want:           []string{"spec.replicas was 2 is 5"},
		},
		{
			name: "a label and an env entry a new manager added",
			change: func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{"app": "web", "sidecar.example/injected": "yes"})
				c := container(u)
				c["env"] = append(c["env"].([]any), map[string]any{"name": "B", "value": "2"})
			},
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields), entry("injector", "",
				`{"f:metadata":{"f:labels":{"f:sidecar.example/injected":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`)},
			wantNot: []string{
				`metadata.labels["sidecar.example/injected"] was <absent> is "yes": now managed by injector, not compared`,
				`spec.template.spec.containers[0].env[1] was <absent> is {"name":"B","value":"<redacted 1 bytes>"}: now managed by injector, not compared`,
			},
		},
		{
			name: "an env entry inserted first: its new owner is found by key, the shifted one by its owner",
			change: func(u *unstructured.Unstructured) {
				c := container(u)
				c["env"] = append([]any{map[string]any{"name": "B", "value": "2"}}, c["env"].([]any)...)
			},
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields), entry("injector", "",
				`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`)},
			want: []string{
				// Compare matches list entries by position, so A, moved to
				// env[1], shows as added; its owner held it in the snapshot
				// (found by key, wherever it moved), so it counts.
				`spec.template.spec.containers[0].env[1] was <absent> is {"name":"A","value":"<redacted 1 bytes>"}`,
			},
			wantNot: []string{
				`spec.template.spec.containers[0].env[0].name was "A" is "B": now managed by injector, not compared`,
				`spec.template.spec.containers[0].env[0].value was "<redacted 1 bytes>" is "<redacted 1 bytes>": now managed by injector, not compared`,
			},
		},
		{
			name: "a port found by its compound key",
			change: func(u *unstructured.Unstructured) {
				container(u)["ports"].([]any)[0].(map[string]any)["name"] = "http"
			},
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields), entry("namer", "",
				`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:name":{}}}}}}}}}`)},
			wantNot: []string{`spec.template.spec.containers[0].ports[0].name was <absent> is "http": now managed by namer, not compared`},
		},
		{
			name: "inside an atomic field, its owner is the whole field's",
			change: func(u *unstructured.Unstructured) {
				u.Object["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "web", "tier": "front"}}
			},
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", creatorFields)},
			want:       []string{`spec.selector.matchLabels.tier was <absent> is "front"`},
		},
		{
			name: "inside an atomic field a new manager took over",
			change: func(u *unstructured.Unstructured) {
				u.Object["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "web", "tier": "front"}}
			},
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", withoutSelector), entry("selector-tool", "", `{"f:spec":{"f:selector":{}}}`)},
			wantNot:    []string{`spec.selector.matchLabels.tier was <absent> is "front": now managed by selector-tool, not compared`},
		},
		{
			name:       "unreadable managedFields: compared, and said",
			change:     setReplicas,
			liveOwners: []metav1.ManagedFieldsEntry{entry("creator", "", `{"f:spec":{"k:[1]":{}}}`)},
			want:       []string{`spec.replicas was 2 is 5 (field ownership unreadable, every field compared: managedFields entry of "creator": ` + readError(t, `{"f:spec":{"k:[1]":{}}}`) + `)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := obj(t, ownedDeployment)
			snap.SetManagedFields([]metav1.ManagedFieldsEntry{entry("creator", "", creatorFields)})
			if tt.snapshotOwners != nil {
				snap.SetManagedFields(tt.snapshotOwners)
			}
			live := snap.DeepCopy()
			tt.change(live)
			live.SetManagedFields(tt.liveOwners)
			got, gotNot := Compare(snap, live)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("differences:\n got %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(gotNot, tt.wantNot) {
				t.Errorf("not compared:\n got %q\nwant %q", gotNot, tt.wantNot)
			}
		})
	}
}

// readError is the error decoding fields gives, as Compare shows it.
func readError(t *testing.T, fields string) string {
	t.Helper()
	u := obj(t, ownedDeployment)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{entry("x", "", fields)})
	_, err := ownershipOf(u)
	if err == nil {
		t.Fatalf("ownershipOf(%s): no error", fields)
	}
	return err.Error()[len(`managedFields entry of "x": `):]
}

func TestCompareSecretNotComparedIsRedacted(t *testing.T) {
	snap := obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: demo}, data: {password: "czNjcjN0LXZhbHVl"}}`)
	snap.SetManagedFields([]metav1.ManagedFieldsEntry{entry("creator", "", `{"f:data":{".":{},"f:password":{}}}`)})
	live := snap.DeepCopy()
	live.Object["data"].(map[string]any)["password"] = "b3RoZXItdmFsdWU=" // other-value
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry("creator", "", `{"f:data":{".":{}}}`), entry("rotator", "", `{"f:data":{"f:password":{}}}`)})
	got, gotNot := Compare(snap, live)
	want := []string{`data.password was "<redacted 12 bytes>" is "<redacted 11 bytes>": now managed by rotator, not compared`}
	if got != nil || !reflect.DeepEqual(gotNot, want) {
		t.Errorf("Compare = %q, %q; want none, %q", got, gotNot, want)
	}
}
