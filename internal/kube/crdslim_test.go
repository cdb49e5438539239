package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
)

// contentTypes records the Content-Type of every answer about CRDs.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && strings.Contains(req.URL.Path, "/customresourcedefinitions") {
			c.mu.Lock()
			c.seen[resp.Header.Get("Content-Type")] = true
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A wait on CRDs reads them as protobuf, without their schemas, and
// judges them as it would the whole objects: established ones are
// Current, one whose names clash with another's fails.
func TestCRDWaitsReadProtobufAndJudgeLikeTheWholeObject(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()
	group := "g" + rand.String(6) + ".upshift.test"
	label := "upshift.test/set=" + group
	for _, kind := range []string{"Widget", "Gadget"} {
		crd := mustObject(t, setCRD(group, kind, "a schema the wait never reads"))
		if _, err := e.a.Apply(ctx, crd); err != nil {
			t.Fatal(err)
		}
		name := crd.GetName()
		t.Cleanup(func() {
			_ = mustCRDClient(t, e.cfg).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}

	seen := &contentTypes{seen: map[string]bool{}}
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(seen.wrap)
	w, err := NewWaiterForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := w.WaitSelectorCurrent(ctx, SelectorRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Selector: label}, 30*time.Second)
	if err != nil {
		t.Fatalf("wait for the established CRDs: %v", err)
	}
	if !strings.Contains(h.Message, "all 2 Current") {
		t.Errorf("message %q, want all 2 Current", h.Message)
	}
	if !seen.seen["application/vnd.kubernetes.protobuf"] || seen.seen["application/json"] {
		t.Errorf("answers about CRDs came as %v, want protobuf only", seen.seen)
	}

	// A third CRD claims the first's plural under another name: never
	// accepted, the wait fails instead of timing out.
	clash := mustObject(t, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clashes.%[1]s, labels: {upshift.test/set: %[1]s}}
spec:
  group: %[1]s
  names: {kind: Clash, plural: clashes, listKind: ClashList, shortNames: [widgets]}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`, group))
	if _, err := e.a.Apply(ctx, clash); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mustCRDClient(t, e.cfg).Delete(context.Background(), clash.GetName(), metav1.DeleteOptions{})
	})
	_, err = w.WaitSelectorCurrent(ctx, SelectorRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Selector: label}, 30*time.Second)
	var nre *NotReadyError
	if !errors.As(err, &nre) || !errors.Is(err, ErrFailing) {
		t.Fatalf("wait with a clashing CRD: %v, want it failing", err)
	}
	if !strings.Contains(nre.Error(), "clashes."+group) {
		t.Errorf("failure %q does not name the clashing CRD", nre.Error())
	}
}

func mustCRDClient(t *testing.T, cfg *rest.Config) interface {
	Delete(context.Context, string, metav1.DeleteOptions) error
} {
	c, err := NewCRDClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
