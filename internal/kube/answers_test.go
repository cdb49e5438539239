package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// crdReads records the reads of CRDs a client sends: verb and what it
// asked the answer as.
type crdReads struct {
	mu   sync.Mutex
	seen []string
}

func (c *crdReads) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/customresourcedefinitions") {
			verb := "list"
			if req.URL.Query().Get("watch") == "true" {
				verb = "watch"
			} else if !strings.HasSuffix(req.URL.Path, "/customresourcedefinitions") {
				verb = "get"
			}
			if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadataList") {
				verb += " metadata"
			}
			c.mu.Lock()
			c.seen = append(c.seen, verb)
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (c *crdReads) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.seen
	c.seen = nil
	return out
}

// A wait on CRDs the run has just written lists their metadata alone and
// judges them from the writes' answers; a CRD another client changed
// since is judged as it is now, not as the run's write left it.
func TestWaitOnCRDsTheRunWroteListsOnlyTheirMetadata(t *testing.T) {
	t.Parallel()
	e := newApplyEnv(t)
	ctx := context.Background()
	reads := &crdReads{}
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(reads.wrap)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(dyn)
	t.Cleanup(c.Close)
	w, err := NewWaiterForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	w = w.WithCache(c)
	a := NewApplier(dyn, newMapper(t, cfg)).WithCache(c)

	group := "g" + rand.String(6) + ".upshift.test"
	sel := SelectorRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Selector: "upshift.test/set=" + group}
	crd := func(kind, description string) string { return setCRD(group, kind, description) }
	kinds := []string{"Widget", "Gadget"}
	for _, kind := range kinds {
		created, err := a.Apply(ctx, mustObject(t, crd(kind, "first")))
		if err != nil {
			t.Fatal(err)
		}
		name := created.GetName()
		t.Cleanup(func() {
			_ = mustCRDClient(t, e.cfg).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		// A create's answer is not established yet: waited for the usual way.
		if _, err := w.WaitCRDEstablished(ctx, name, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// An upgrade's CRDs: updates, whose answers show them established.
	for _, kind := range kinds {
		if _, err := a.Apply(ctx, mustObject(t, crd(kind, "second"))); err != nil {
			t.Fatal(err)
		}
	}
	reads.take()
	h, err := w.WaitSelectorCurrent(ctx, sel, 30*time.Second)
	if err != nil {
		t.Fatalf("wait for the updated CRDs: %v", err)
	}
	if !strings.Contains(h.Message, "all 2 Current") {
		t.Errorf("message %q, want all 2 Current", h.Message)
	}
	if got := reads.take(); len(got) != 1 || got[0] != "list metadata" {
		t.Errorf("the wait read the CRDs with %q, want one list of their metadata", got)
	}

	// Another client gives Gadget a short name that is the Widget's
	// plural: the names clash, so Gadget's new names are not accepted,
	// which the run's answer cannot show.
	clash := []byte(`{"spec":{"names":{"shortNames":["widgets"]}}}`)
	if _, err := dyn.Resource(CRDResource).Patch(ctx, "gadgets."+group, types.MergePatchType, clash, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	reads.take()
	_, err = w.WaitSelectorCurrent(ctx, sel, 30*time.Second)
	var nre *NotReadyError
	if !errors.As(err, &nre) || !errors.Is(err, ErrFailing) {
		t.Fatalf("wait after another client's change: %v, want it failing on the clash", err)
	}
	if !strings.Contains(nre.Error(), "gadgets."+group) {
		t.Errorf("failure %q does not name gadgets.%s", nre.Error(), group)
	}
	if got := reads.take(); !contains(got, "list") {
		t.Errorf("the wait read the CRDs with %q, want them read whole once one was changed by another", got)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
