package source

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The kinds of object a source or a Helm step's valuesFrom reads.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
)

// Objects reads the ConfigMaps and Secrets a plan's sources name, with the
// credentials the plan acts with. Its errors are the API server's
// (NotFound, Forbidden, ...), possibly wrapped with a better message: Read
// tells a missing object by apierrors.IsNotFound.
type Objects interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ErrNoObjects: a configMap, secret or valuesFrom source and no cluster
// (Env.Objects) to read it from.
var ErrNoObjects = errors.New("it is read from the cluster, and there is no cluster to read it from")

// ErrNotFound: the ConfigMap or Secret a source names, or its key, does
// not exist.
var ErrNotFound = errors.New("not found")

// notFound says what is missing and how to fix it, and is ErrNotFound.
type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == ErrNotFound }

// DescribeRef names a ConfigMap or Secret reference in messages:
// "configMap web-manifests" (every key) or "secret web-values/values.yaml".
// It never holds the content.
func DescribeRef(kind string, ref v1alpha1.ObjectKeyRef) string {
	d := "configMap " + ref.Name
	if kind == KindSecret {
		d = "secret " + ref.Name
	}
	if ref.Key != "" {
		d += "/" + ref.Key
	}
	return d
}

// readObject returns the key of the object or, without a key, every key
// in key order joined as a YAML stream (as a directory's files are).
func readObject(ctx context.Context, env Env, kind string, ref v1alpha1.ObjectKeyRef) ([]byte, error) {
	data, err := objectData(ctx, env, kind, ref.Name)
	if err != nil {
		return nil, err
	}
	if ref.Key != "" {
		b, ok := data[ref.Key]
		if !ok {
			return nil, missingKey(env, kind, ref.Name, ref.Key, data)
		}
		return b, nil
	}
	keys := sortedKeys(data)
	docs := make([][]byte, len(keys))
	for i, k := range keys {
		docs[i] = data[k]
	}
	return joinDocuments(docs), nil
}

// Values reads a Helm step's valuesFrom entry: the bytes of its
// valuesKey (default values.yaml). A missing object or key is an
// ErrNotFound error unless the entry is optional: then found is false.
func Values(ctx context.Context, ref v1alpha1.ValuesReference, env Env) (b []byte, found bool, err error) {
	key := ref.ValuesKey
	if key == "" {
		key = v1alpha1.DefaultValuesKey
	}
	b, err = readObject(ctx, env, ref.Kind, v1alpha1.ObjectKeyRef{Name: ref.Name, Key: key})
	switch {
	case err == nil:
		return b, true, nil
	case ref.Optional && errors.Is(err, ErrNotFound):
		return nil, false, nil
	}
	return nil, false, err
}

// objectData is the object's keys and values: a ConfigMap's data and
// binaryData, a Secret's data.
func objectData(ctx context.Context, env Env, kind, name string) (map[string][]byte, error) {
	if env.Objects == nil {
		return nil, fmt.Errorf("%s %s: %w", kind, name, ErrNoObjects)
	}
	data := map[string][]byte{}
	switch kind {
	case KindConfigMap:
		cm, err := env.Objects.ConfigMap(ctx, env.Namespace, name)
		if err != nil {
			return nil, objectError(env, kind, name, err)
		}
		for k, v := range cm.Data {
			data[k] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			data[k] = v
		}
	case KindSecret:
		s, err := env.Objects.Secret(ctx, env.Namespace, name)
		if err != nil {
			return nil, objectError(env, kind, name, err)
		}
		for k, v := range s.Data {
			data[k] = v
		}
	default:
		return nil, fmt.Errorf("kind %q: use ConfigMap or Secret", kind)
	}
	return data, nil
}

func objectError(env Env, kind, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return &notFound{fmt.Sprintf("%s %s not found in %s: create it there, or correct the name", kind, name, where(env))}
	}
	return fmt.Errorf("read %s %s in %s: %w", kind, name, where(env), err)
}

// missingKey names the keys the object has (names, never values).
func missingKey(env Env, kind, name, key string, data map[string][]byte) error {
	has := "it has no keys"
	if len(data) > 0 {
		has = "its keys: " + strings.Join(sortedKeys(data), ", ")
	}
	return &notFound{fmt.Sprintf("%s %s in %s has no key %s (%s): add the key, or correct it", kind, name, where(env), key, has)}
}

// where names the namespace, and why it is that one when the plan did
// not say.
func where(env Env) string {
	w := "namespace " + env.Namespace
	if env.NamespaceDefaulted {
		w += " (the plan sets no metadata.namespace)"
	}
	return w
}

func sortedKeys(data map[string][]byte) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
