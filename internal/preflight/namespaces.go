package preflight

import (
	"context"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nsLookup is a namespace as the cluster has it: err is nil when it is
// there, NotFound when it is not, or why it could not be told; done is
// closed once it is known.
type nsLookup struct {
	err  error
	done chan struct{}
}

// nsList is every namespace, listed once for the recreate steps whose
// namespace is a pattern; done is closed once it is known.
type nsList struct {
	items []corev1.Namespace
	err   error
	done  chan struct{}
}

// readNamespaces starts looking up every namespace the plan names while
// preflight walks it: the walk asked for each one in turn, some twice
// (a Helm release's and its chart's objects'). When a recreate step's
// pattern needs every namespace listed anyway, that one list answers
// them all; otherwise each is asked, eight at a time.
func (pf *preflight) readNamespaces(ctx context.Context) {
	pf.nsLookups = map[string]*nsLookup{}
	var names []string
	add := func(ns string) {
		if ns != "" && !strings.Contains(ns, "*") && pf.nsLookups[ns] == nil {
			pf.nsLookups[ns] = &nsLookup{done: make(chan struct{})}
			names = append(names, ns)
		}
	}
	pattern := false
	for _, st := range pf.p.Plan.Spec.Stages {
		for _, step := range st.Steps {
			switch {
			case step.Image != nil:
				add(step.Image.Namespace)
			case step.Helm != nil:
				add(step.Helm.Namespace)
			case step.HelmUninstall != nil:
				add(step.HelmUninstall.Namespace)
			case step.Recreate != nil:
				pattern = pattern || strings.Contains(step.Recreate.Namespace, "*")
				add(step.Recreate.Namespace)
			}
		}
	}
	for _, objs := range pf.p.Objects {
		for _, o := range objs {
			add(o.GetNamespace()) // a cluster-scoped object has none
		}
	}
	add(pf.d.RunsNamespace) // runNeeds, with the same client; "": none
	if pattern {
		pf.nsAll = &nsList{done: make(chan struct{})}
	}
	api := pf.d.Client.CoreV1().Namespaces()
	// Every entry is made before the walk looks one up.
	go func() {
		if pf.nsAll != nil {
			list, err := api.List(ctx, metav1.ListOptions{})
			if err == nil {
				pf.nsAll.items = list.Items
			}
			pf.nsAll.err = err
			close(pf.nsAll.done)
			if err == nil {
				there := map[string]bool{}
				for _, ns := range list.Items {
					there[ns.Name] = true
				}
				for _, ns := range names {
					if l := pf.nsLookups[ns]; !there[ns] {
						l.err = apierrors.NewNotFound(corev1.Resource("namespaces"), ns)
					}
					close(pf.nsLookups[ns].done)
				}
				return
			}
			// Not listed (forbidden, say): each is asked on its own.
		}
		var g errgroup.Group
		g.SetLimit(8)
		for _, ns := range names {
			l := pf.nsLookups[ns]
			g.Go(func() error {
				defer close(l.done)
				_, l.err = api.Get(ctx, ns, metav1.GetOptions{})
				return nil // each namespace's error is reported where the plan names it
			})
		}
		_ = g.Wait()
	}()
}

// namespaceErr is the lookup of ns begun up front, or one made now: nil
// when the namespace is there.
func (pf *preflight) namespaceErr(ctx context.Context, ns string) error {
	if l := pf.nsLookups[ns]; l != nil {
		<-l.done
		return l.err
	}
	_, err := pf.d.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	return err
}

// allNamespaces is every namespace, listed up front when a pattern needs
// them, or now.
func (pf *preflight) allNamespaces(ctx context.Context) ([]corev1.Namespace, error) {
	if pf.nsAll != nil {
		<-pf.nsAll.done
		return pf.nsAll.items, pf.nsAll.err
	}
	list, err := pf.d.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}
