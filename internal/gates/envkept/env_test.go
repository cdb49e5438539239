package envkept

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func val(name, v string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: v} }

func field(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func cmKey(name, cm, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: key}}}
}

func secretKey(name, s, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: key}}}
}

// The Liqo controller-manager's variables, as the demo platform sets them.
var liqo = []corev1.EnvVar{
	val("CLUSTER_ID", "cluster-one-s3cr3t"),
	val("CLUSTER_ROLE", "provider"),
	field("POD_NAMESPACE", "metadata.namespace"),
	cmKey("LOG_LEVEL", "liqo", "logLevel"),
	secretKey("TOKEN", "liqo-auth", "token"),
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after []corev1.EnvVar
		names         []string
		want          []string
	}{
		{name: "the same, in another order", before: liqo,
			after: []corev1.EnvVar{liqo[4], liqo[2], liqo[0], liqo[3], liqo[1]}},
		{name: "a value changed", before: liqo,
			after: []corev1.EnvVar{val("CLUSTER_ID", "cluster-two-s3cr3t"), liqo[1], liqo[2], liqo[3], liqo[4]},
			want:  []string{"CLUSTER_ID value changed"}},
		{name: "a valueFrom changed", before: liqo,
			after: []corev1.EnvVar{liqo[0], liqo[1], field("POD_NAMESPACE", "spec.nodeName"), cmKey("LOG_LEVEL", "liqo", "level"), liqo[4]},
			want: []string{
				"LOG_LEVEL changed from valueFrom configMapKeyRef liqo/logLevel to valueFrom configMapKeyRef liqo/level",
				"POD_NAMESPACE changed from valueFrom fieldRef metadata.namespace to valueFrom fieldRef spec.nodeName",
			}},
		{name: "a value became a valueFrom, and back", before: liqo,
			after: []corev1.EnvVar{secretKey("CLUSTER_ID", "ids", "id"), liqo[1], val("POD_NAMESPACE", "liqo"), liqo[3], liqo[4]},
			want: []string{
				"CLUSTER_ID changed from a value to valueFrom secretKeyRef ids/id",
				"POD_NAMESPACE changed from valueFrom fieldRef metadata.namespace to a value",
			}},
		{name: "removed and added", before: liqo,
			after: []corev1.EnvVar{liqo[1], liqo[2], liqo[3], val("NEW", "x")},
			want: []string{
				"CLUSTER_ID removed (was a value)",
				"NEW added (a value)",
				"TOKEN removed (was valueFrom secretKeyRef liqo-auth/token)",
			}},
		{name: "only the named ones count", before: liqo,
			after: []corev1.EnvVar{val("CLUSTER_ID", "other"), liqo[1], liqo[2], liqo[3], val("NEW", "x")},
			names: []string{"POD_NAMESPACE", "CLUSTER_ROLE", "TENANT_NAMESPACE"}},
		{name: "a named one changed, an unnamed one too", before: liqo,
			after: []corev1.EnvVar{val("CLUSTER_ID", "other"), val("CLUSTER_ROLE", "consumer"), liqo[2], liqo[3]},
			names: []string{"CLUSTER_ROLE", "POD_NAMESPACE"},
			want:  []string{"CLUSTER_ROLE value changed"}},
		{name: "a named one that was unset and is set now", before: liqo,
			after: append(append([]corev1.EnvVar{}, liqo...), val("TENANT_NAMESPACE", "liqo-tenant")),
			names: []string{"TENANT_NAMESPACE"},
			want:  []string{"TENANT_NAMESPACE added (a value)"}},
		{name: "the last of a name counts, as for the kubelet",
			before: []corev1.EnvVar{val("A", "1"), val("A", "2")},
			after:  []corev1.EnvVar{val("A", "2")}},
		{name: "a duplicate that now wins",
			before: []corev1.EnvVar{val("A", "1"), val("A", "2")},
			after:  []corev1.EnvVar{val("A", "2"), val("A", "1")},
			want:   []string{"A value changed"}},
		{name: "an optional flag the short form does not show",
			before: []corev1.EnvVar{cmKey("L", "c", "k")},
			after: []corev1.EnvVar{func() corev1.EnvVar {
				e := cmKey("L", "c", "k")
				yes := true
				e.ValueFrom.ConfigMapKeyRef.Optional = &yes
				return e
			}()},
			want: []string{`L changed from valueFrom {"configMapKeyRef":{"name":"c","key":"k"}} to valueFrom {"configMapKeyRef":{"name":"c","key":"k","optional":true}}`}},
		{name: "nothing before, nothing after"},
		{name: "every variable removed", before: liqo[:2],
			want: []string{"CLUSTER_ID removed (was a value)", "CLUSTER_ROLE removed (was a value)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Diff(tc.before, tc.after, tc.names) {
				got = append(got, c.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Diff:\n got %q\nwant %q", got, tc.want)
			}
			// Values never show, whatever changed.
			for _, c := range got {
				for _, e := range append(append([]corev1.EnvVar{}, tc.before...), tc.after...) {
					if e.Value != "" && len(e.Value) > 2 && strings.Contains(c, e.Value) {
						t.Errorf("change %q shows the value %q of %s", c, e.Value, e.Name)
					}
				}
			}
		})
	}
}

func TestKeptAndUnset(t *testing.T) {
	after := []corev1.EnvVar{liqo[0], liqo[1], val("NEW", "x")}
	if got, want := Kept(liqo[:2], after, nil), []string{"CLUSTER_ID", "CLUSTER_ROLE", "NEW"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Kept of every variable = %v, want %v", got, want)
	}
	names := []string{"TENANT_NAMESPACE", "CLUSTER_ID", "CLUSTER_ID", "A"}
	if got, want := Kept(liqo, after, names), []string{"A", "CLUSTER_ID", "TENANT_NAMESPACE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Kept of names = %v, want %v", got, want)
	}
	if got, want := Unset(liqo, after, names), []string{"A", "TENANT_NAMESPACE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Unset = %v, want %v", got, want)
	}
}
