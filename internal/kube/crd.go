package kube

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// crdWaits bounds the CRD waits in flight at once.
const crdWaits = 8

// WaitCRDsEstablished waits until every CRD is Established, given each as
// the API server answered the write that applied it. A CRD whose answer
// already shows it established under the names its spec asks for (what an
// update of an existing CRD answers) needs no wait and costs no request;
// the others are waited for side by side. The RESTMapper is reset once at
// the end, so the new kinds resolve. It returns the first error: a CRD
// that fails, or the deadline.
func (w *Waiter) WaitCRDsEstablished(ctx context.Context, applied []*unstructured.Unstructured, timeout time.Duration) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(crdWaits)
	waited := false
	for _, crd := range applied {
		if CRDEstablished(crd) {
			continue
		}
		waited = true
		ref := ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.GetName()}
		g.Go(func() error {
			_, err := w.WaitCurrent(gctx, ref, timeout)
			return err
		})
	}
	err := g.Wait()
	if err == nil && waited {
		if r, ok := w.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	}
	return err
}

// CRDEstablished tells whether a CRD, as read or as a write's answer,
// is established under the names its spec asks for: Established and
// NamesAccepted are True (kstatus's test for Current) and the names the
// API server accepted are its spec's. A spec that changes its names is
// established again only once the API server has accepted the new ones.
func CRDEstablished(u *unstructured.Unstructured) bool {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return false
	}
	established, accepted := false, false
	for _, c := range crd.Status.Conditions {
		switch c.Type {
		case apiextensionsv1.Established:
			established = c.Status == apiextensionsv1.ConditionTrue
		case apiextensionsv1.NamesAccepted:
			accepted = c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return established && accepted && equality.Semantic.DeepEqual(crd.Spec.Names, crd.Status.AcceptedNames)
}
