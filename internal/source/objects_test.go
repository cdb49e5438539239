package source

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// fakeObjects serves ConfigMaps and Secrets from maps; err, when set, is
// every read's answer. The reads against a real API server are the
// runner's tests.
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	err        error
	namespaces []string // each read's namespace
}

var _ Objects = (*fakeObjects)(nil)

func (f *fakeObjects) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.namespaces = append(f.namespaces, ns)
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.configMaps[name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeObjects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.namespaces = append(f.namespaces, ns)
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{
			"web": {
				Data:       map[string]string{"20-c.yaml": cmC, "00-a.yaml": cmA},
				BinaryData: map[string][]byte{"10-b.json": []byte(cmB)},
			},
			"empty": {},
		},
		secrets: map[string]*corev1.Secret{
			"jobs":   {Data: map[string][]byte{"up.yaml": []byte(cmA), "values.yaml": []byte("db: {password: s3cr3t}\n")}},
			"values": {Data: map[string][]byte{"values.yaml": []byte("replicas: 3\n")}},
		},
	}
}

func TestReadConfigMapAndSecret(t *testing.T) {
	ref := func(name, key string) *v1alpha1.ObjectKeyRef { return &v1alpha1.ObjectKeyRef{Name: name, Key: key} }
	for _, tt := range []struct {
		name    string
		src     v1alpha1.Source
		noObjs  bool
		want    []string // object names, in order
		wantErr []string
		is      error
	}{
		{name: "configMap key", src: v1alpha1.Source{ConfigMap: ref("web", "20-c.yaml")}, want: []string{"c"}},
		{name: "configMap, every key of data and binaryData in key order", src: v1alpha1.Source{ConfigMap: ref("web", "")}, want: []string{"a", "b", "c"}},
		{name: "binaryData key", src: v1alpha1.Source{ConfigMap: ref("web", "10-b.json")}, want: []string{"b"}},
		{name: "secret key", src: v1alpha1.Source{Secret: ref("jobs", "up.yaml")}, want: []string{"a"}},
		{name: "configMap without keys", src: v1alpha1.Source{ConfigMap: ref("empty", "")}},
		{name: "missing configMap", src: v1alpha1.Source{ConfigMap: ref("nope", "")},
			wantErr: []string{"ConfigMap nope not found in namespace upgrades: create it there, or correct the name"}, is: ErrNotFound},
		{name: "missing secret", src: v1alpha1.Source{Secret: ref("nope", "k")},
			wantErr: []string{"Secret nope not found in namespace upgrades"}, is: ErrNotFound},
		{name: "missing key names the keys there are", src: v1alpha1.Source{Secret: ref("jobs", "down.yaml")},
			wantErr: []string{"Secret jobs in namespace upgrades has no key down.yaml (its keys: up.yaml, values.yaml)"}, is: ErrNotFound},
		{name: "no cluster", src: v1alpha1.Source{Secret: ref("jobs", "up.yaml")}, noObjs: true,
			wantErr: []string{"Secret jobs: it is read from the cluster"}, is: ErrNoObjects},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := newFakeObjects()
			env := Env{Namespace: "upgrades", Objects: objs}
			if tt.noObjs {
				env.Objects = nil
			}
			b, err := Read(context.Background(), tt.src, env)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Read: no error, want %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !errors.Is(err, tt.is) {
					t.Errorf("error %v is not %v", err, tt.is)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error quotes the Secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			for _, ns := range objs.namespaces {
				if ns != "upgrades" {
					t.Errorf("read from namespace %q, want upgrades", ns)
				}
			}
			objsOut, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, b)
			}
			var got []string
			for _, o := range objsOut {
				got = append(got, o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("objects = %q, want %q", got, tt.want)
			}
		})
	}
}

// The CLI reads a plan without metadata.namespace from "default", and
// says why when something is missing there.
func TestReadNamesTheDefaultedNamespace(t *testing.T) {
	env := Env{Namespace: "default", NamespaceDefaulted: true, Objects: newFakeObjects()}
	_, err := Read(context.Background(), v1alpha1.Source{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "nope"}}, env)
	if want := "ConfigMap nope not found in namespace default (the plan sets no metadata.namespace)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

// Errors other than NotFound (Forbidden, say) are passed on, never
// taken for a missing object, so an optional valuesFrom does not hide
// them.
func TestReadPassesOtherErrorsOn(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "values", errors.New("no RBAC"))
	env := Env{Namespace: "upgrades", Objects: &fakeObjects{err: forbidden}}
	_, _, err := Values(context.Background(), v1alpha1.ValuesReference{Kind: KindSecret, Name: "values", Optional: true}, env)
	if err == nil || !apierrors.IsForbidden(err) || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "read Secret values in namespace upgrades") {
		t.Errorf("Values error = %v; want the Forbidden passed on, naming the Secret", err)
	}
}

func TestValues(t *testing.T) {
	env := Env{Namespace: "upgrades", Objects: newFakeObjects()}
	for _, tt := range []struct {
		name      string
		ref       v1alpha1.ValuesReference
		want      string
		wantFound bool
		wantErr   string
	}{
		{name: "default key values.yaml", ref: v1alpha1.ValuesReference{Kind: KindSecret, Name: "values"}, want: "replicas: 3\n", wantFound: true},
		{name: "valuesKey", ref: v1alpha1.ValuesReference{Kind: KindConfigMap, Name: "web", ValuesKey: "00-a.yaml"}, want: cmA, wantFound: true},
		{name: "optional, object missing", ref: v1alpha1.ValuesReference{Kind: KindConfigMap, Name: "nope", Optional: true}},
		{name: "optional, key missing", ref: v1alpha1.ValuesReference{Kind: KindSecret, Name: "values", ValuesKey: "prod.yaml", Optional: true}},
		{name: "required, object missing", ref: v1alpha1.ValuesReference{Kind: KindConfigMap, Name: "nope"}, wantErr: "ConfigMap nope not found in namespace upgrades"},
		{name: "required, key missing", ref: v1alpha1.ValuesReference{Kind: KindConfigMap, Name: "web"}, wantErr: "ConfigMap web in namespace upgrades has no key values.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, found, err := Values(context.Background(), tt.ref, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Values error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want || found != tt.wantFound {
				t.Errorf("Values = %q, %v; want %q, %v", b, found, tt.want, tt.wantFound)
			}
		})
	}
}

// Describe names the object and the key, never the content.
func TestDescribeReferences(t *testing.T) {
	for src, want := range map[*v1alpha1.Source]string{
		{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "web-manifests"}}:                "configMap web-manifests",
		{Secret: &v1alpha1.ObjectKeyRef{Name: "web-values", Key: "values.yaml"}}:  "secret web-values/values.yaml",
		{Inline: "kind: Secret\nstringData: {password: s3cr3t}\n"}:                "inline YAML",
		{URL: "https://u:s3cr3t@example.test/m.yaml"}:                             "url https://xxxxx@example.test/m.yaml",
		{ConfigMap: &v1alpha1.ObjectKeyRef{Name: "web-manifests", Key: "a.yaml"}}: "configMap web-manifests/a.yaml",
	} {
		if got := Describe(*src); got != want {
			t.Errorf("Describe = %q, want %q", got, want)
		}
	}
}

// A Secret's content that does not parse is not quoted by the error.
func TestDecodeSecretWithholdsTheParserMessage(t *testing.T) {
	bad := "apiVersion: v1\nkind: [s3cr3t\n"
	if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "yaml:") {
		t.Fatalf("Decode error = %v; want the parser's message (the test's premise)", err)
	}
	_, err := DecodeSecret([]byte(bad))
	if err == nil || strings.Contains(err.Error(), "yaml:") || !strings.Contains(err.Error(), "document 1") || !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("DecodeSecret error = %v; want document 1, ErrInvalidDocument, without the parser's message", err)
	}
	objs, err := DecodeSecret([]byte(cmA))
	if err != nil || len(objs) != 1 {
		t.Errorf("DecodeSecret of a valid document: %v, %d objects", err, len(objs))
	}
}
