package kube

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// CRDResource is where CustomResourceDefinitions are served.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// NewCRDClient returns a client that reads CustomResourceDefinitions as
// protobuf into typed objects. A platform's CRDs are its biggest objects
// (Liqo's 28 are 1.5 MB of JSON, mostly schemas), and what a wait or a
// preflight check needs of them is their names, versions and conditions:
// 28 CRDs list in ~34 ms this way and in ~78 ms as JSON decoded into
// unstructured maps, on the project's 2-core machine, most of it the API
// server's encoding and the client's decoding. Writes and backups keep
// the dynamic client and JSON: they need every field.
func NewCRDClient(cfg *rest.Config) (apiextensionsclient.CustomResourceDefinitionInterface, error) {
	pb := rest.CopyConfig(cfg)
	pb.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	pb.ContentType = runtime.ContentTypeProtobuf
	c, err := apiextensionsclient.NewForConfig(pb)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition client: %w", err)
	}
	return c.CustomResourceDefinitions(), nil
}

// SlimCRD is the CRD without what nothing here reads and most of its
// bytes are: its versions' schemas, its managed fields and a client-side
// apply's copy of itself. Its names, versions (served, storage),
// conditions, accepted names and stored versions are kept, so kstatus and
// the stored-version checks judge it as they would the whole object.
func SlimCRD(crd *apiextensionsv1.CustomResourceDefinition) (*unstructured.Unstructured, error) {
	c := crd.DeepCopy()
	c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	c.ManagedFields = nil
	delete(c.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	for i := range c.Spec.Versions {
		c.Spec.Versions[i].Schema = nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// crdListWatch lists and watches CRDs through the typed client; consistent
// as listWatch's.
func crdListWatch(c apiextensionsclient.CustomResourceDefinitionInterface, tweak func(*metav1.ListOptions), consistent bool) *cache.ListWatch {
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }
	return listWatchWith(list, c.Watch, tweak, consistent)
}

// slimCRDs is the transform of a typed CRD informer: it stores SlimCRD's
// unstructured object, which the wait judges as any other.
func slimCRDs(onErr func(error)) cache.TransformFunc {
	return func(obj any) (any, error) {
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return obj, nil // already slim (the informer may transform an object twice)
		}
		u, err := SlimCRD(crd)
		if err != nil {
			onErr(err)
			return obj, nil
		}
		return u, nil
	}
}
