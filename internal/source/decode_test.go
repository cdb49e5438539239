package source

import (
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // "Kind namespace/name" per object, in order
		wantErr []string // substrings of the error
	}{
		{
			name: "yaml stream with empty and comment-only documents",
			in: `---
# a comment only
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: demo}
data: {replicas: "3"}
---

---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: 2
`,
			want: []string{"ConfigMap demo/a", "Deployment demo/web"},
		},
		{
			name: "json object",
			in:   `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"demo"}}`,
			want: []string{"Namespace /demo"},
		},
		{
			name: "json then yaml, as a directory joins them",
			in:   "---\n{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"demo\"}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: demo}\n",
			want: []string{"Namespace /demo", "ConfigMap demo/a"},
		},
		{
			name: "concatenated json objects",
			in:   `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}`,
			want: []string{"Namespace /a", "Namespace /b"},
		},
		{
			name: "list flattened",
			in: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: one, namespace: demo}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: two, namespace: demo}
`,
			want: []string{"ConfigMap demo/one", "ConfigMap demo/two"},
		},
		{
			name: "empty stream",
			in:   "\n# nothing\n",
		},
		{
			name: "missing name names the document",
			in: `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: demo}
`,
			wantErr: []string{"document 2", "missing metadata.name"},
		},
		{
			name:    "missing apiVersion and kind",
			in:      "metadata: {name: a}\n",
			wantErr: []string{"document 1", "missing apiVersion, kind"},
		},
		{
			name:    "empty documents count in the index",
			in:      "---\n# empty\n---\nkind: ConfigMap\nmetadata: {name: a}\n",
			wantErr: []string{"document 2", "missing apiVersion"},
		},
		{
			name:    "list item without kind",
			in:      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  metadata: {name: a}\n",
			wantErr: []string{"document 1 item 1", "missing kind"},
		},
		{
			name:    "scalar document",
			in:      "just a string\n",
			wantErr: []string{"document 1", "not an object"},
		},
		{
			name:    "malformed yaml",
			in:      "apiVersion: v1\nkind: [unclosed\n",
			wantErr: []string{"document 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode([]byte(tt.in))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Decode: no error, want one containing %q", tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidDocument) {
					t.Errorf("error %v is not ErrInvalidDocument", err)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("objects = %q, want %q", got, tt.want)
			}
		})
	}
}

// Integers must stay integers: executors read them with NestedInt64.
func TestDecodeKeepsIntegers(t *testing.T) {
	objs, err := Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: demo}\nspec: {replicas: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := objs[0].Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Errorf("replicas = %#v, want int64 3", objs[0].Object["spec"].(map[string]any)["replicas"])
	}
}

func TestDigest(t *testing.T) {
	if got, want := Digest([]byte("hello")), "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"; got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
}
