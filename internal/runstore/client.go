package runstore

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// RESTClient is a REST client of upshift.dev/v1alpha1 for readers that
// watch runs (the HTTP server's shared watch); writes go through Store.
func RESTClient(cfg *rest.Config) (rest.Interface, error) { return runsClient(cfg) }

// runsClient is a REST client of upshift.dev/v1alpha1 (UpgradeRun), on
// the API's own scheme.
func runsClient(cfg *rest.Config) (rest.Interface, error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1alpha1.GroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("client of %s: %w", v1alpha1.APIVersion, err)
	}
	return rc, nil
}

// noResource tells the API server's answer to a request for a resource
// it does not serve (the UpgradeRun CRD is not installed) from a missing
// object, whose NotFound names it.
func noResource(err error) bool {
	var st apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &st) {
		return false
	}
	d := st.Status().Details
	return d == nil || d.Name == ""
}

// errNoCRD is what a write says when the CRD is missing.
func errNoCRD(err error) error {
	return fmt.Errorf("the UpgradeRun CRD (upgraderuns.upshift.dev) is not installed (%v): apply a plan with upshift, which installs it, or have a cluster admin run `upshift crds | kubectl apply -f -`", err)
}
