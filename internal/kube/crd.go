package kube

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
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
	// One deadline for all: a wait queued behind others gets what is left.
	deadline := time.Now().Add(timeout)
	waited := false
	for _, crd := range applied {
		if CRDEstablished(crd) {
			continue
		}
		waited = true
		ref := ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.GetName()}
		g.Go(func() error {
			left := time.Until(deadline)
			if left <= 0 {
				h := Health{Status: status.UnknownStatus, Message: ref.String() + ": not waited for, the step's time was up"}
				return &NotReadyError{Reason: ErrTimeout, Health: h, Timeout: timeout}
			}
			_, err := w.WaitCurrent(gctx, ref, left)
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
// It reads the few fields it needs in place: converting a whole CRD, its
// schema included, costs a millisecond each, and a platform has dozens.
func CRDEstablished(u *unstructured.Unstructured) bool {
	conditions, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return false
	}
	established, accepted := false, false
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["type"] {
		case string(apiextensionsv1.Established):
			established = m["status"] == string(apiextensionsv1.ConditionTrue)
		case string(apiextensionsv1.NamesAccepted):
			accepted = m["status"] == string(apiextensionsv1.ConditionTrue)
		}
	}
	if !established || !accepted {
		return false
	}
	want, _, err1 := unstructured.NestedMap(u.Object, "spec", "names")
	got, _, err2 := unstructured.NestedMap(u.Object, "status", "acceptedNames")
	return err1 == nil && err2 == nil && equality.Semantic.DeepEqual(want, got)
}
