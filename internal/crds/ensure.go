package crds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/config/crd"
)

// Found is what Ensure found or did.
type Found string

const (
	// Current: the CRD is installed, Established and carries the
	// embedded digest; nothing was written.
	Current Found = "current"
	// Installed: the CRD was missing and is installed now.
	Installed Found = "installed"
	// Updated: the CRD carried another digest and is replaced now.
	Updated Found = "updated"
	// Unchecked: the caller may not read CRDs, so nothing was checked;
	// the caller probes the resource itself (see Ensure).
	Unchecked Found = "unchecked"
)

// ErrForbidden: the CRD must be installed or updated, and the caller may
// not write CRDs.
var ErrForbidden = errors.New("may not install CRDs")

// FixCommand installs every CRD this binary needs; a cluster admin runs it.
const FixCommand = "upshift crds | kubectl apply -f -"

// FieldManager owns the CRDs' fields (kube.FieldManager's value: this
// package is imported by test helpers that kube's own tests use, so it
// cannot import kube).
const FieldManager = "upshift"

// EstablishTimeout bounds the wait for an applied CRD to be Established.
var EstablishTimeout = 30 * time.Second

// Notice says what Ensure did, for the driver to report ("" when it wrote
// nothing).
func (o Found) Notice(name string) string {
	switch o {
	case Installed:
		return "installed CRD " + name
	case Updated:
		return "updated CRD " + name + " to this upshift's version"
	}
	return ""
}

// Ensure makes the embedded CRD named name installed, Established and
// current on the cluster. When the caller may not read CRDs it returns
// Unchecked and writes nothing: the caller tells a missing CRD from the
// resource's answers.
func Ensure(ctx context.Context, c apiextensionsclient.Interface, name string) (Found, error) {
	// The digest tells whether the cluster's copy is current; the CRD is
	// decoded only to be written.
	digest, err := crd.DigestOf(name)
	if err != nil {
		return "", err
	}
	cur, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	outcome := Updated
	switch {
	case apierrors.IsForbidden(err):
		return Unchecked, nil
	case apierrors.IsNotFound(err):
		outcome = Installed
	case err != nil:
		return "", fmt.Errorf("read CRD %s: %w", name, err)
	case cur.Annotations[crd.AnnotationDigest] == digest:
		if Established(cur) {
			return Current, nil
		}
		// Installed by someone else a moment ago, not yet served: wait.
		return Current, waitEstablished(ctx, c, name)
	}
	want, err := crd.Get(name)
	if err != nil {
		return "", err
	}
	if err := apply(ctx, c, want); err != nil {
		if apierrors.IsForbidden(err) {
			what := "is not installed"
			if outcome == Updated {
				what = "is installed at another version than this upshift's"
			}
			return "", fmt.Errorf("%w: CRD %s %s, and installing it needs permission to patch customresourcedefinitions.apiextensions.k8s.io (cluster scope), which this user lacks (%w): a cluster admin can install it with `%s`; nothing was changed",
				ErrForbidden, name, what, err, FixCommand)
		}
		return "", fmt.Errorf("install CRD %s: %w", name, err)
	}
	return outcome, waitEstablished(ctx, c, name)
}

// IsCurrent reports, reading only, whether the CRD named name is
// installed, Established and carries the embedded digest: Ensure would
// write nothing. An error (forbidden included) says nothing either way.
func IsCurrent(ctx context.Context, c apiextensionsclient.Interface, name string) (bool, error) {
	digest, err := crd.DigestOf(name)
	if err != nil {
		return false, err
	}
	cur, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return cur.Annotations[crd.AnnotationDigest] == digest && Established(cur), nil
}

// apply writes the CRD server-side, taking over the fields another
// manager (kubectl, an older upshift) set.
func apply(ctx context.Context, c apiextensionsclient.Interface, want *apiextensionsv1.CustomResourceDefinition) error {
	body, err := json.Marshal(want)
	if err != nil {
		return err
	}
	force := true
	_, err = c.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, want.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	return err
}

// waitEstablished polls until the CRD is Established (its names accepted
// and its resource served).
func waitEstablished(ctx context.Context, c apiextensionsclient.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, EstablishTimeout)
	defer cancel()
	for {
		cur, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err == nil && Established(cur) {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("conditions %v", conditions(cur))
			}
			return fmt.Errorf("CRD %s is not Established after %s (%v): %w", name, EstablishTimeout, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Established reports whether the API server serves the CRD's resource.
func Established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func conditions(c *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, cond := range c.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s)", cond.Type, cond.Status, cond.Message))
	}
	return out
}
