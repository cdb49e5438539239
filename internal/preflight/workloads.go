package preflight

import (
	"context"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// workloadKey names an image step's workload.
type workloadKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// liveWorkload is an image step's workload as the cluster has it, or why
// it could not be read; done is closed once it is known.
type liveWorkload struct {
	obj  *unstructured.Unstructured
	err  error
	done chan struct{}
}

// readWorkloads starts reading the workload of every image step, eight at
// a time, while preflight walks the plan: a platform upgraded component
// by component (Liqo's runbook: seven of them) made the walk wait a round
// trip per step.
func (pf *preflight) readWorkloads(ctx context.Context) {
	pf.workloads = map[workloadKey]*liveWorkload{}
	var keys []workloadKey
	for _, st := range pf.p.Plan.Spec.Stages {
		for _, step := range st.Steps {
			s := step.Image
			if s == nil {
				continue
			}
			m, err := pf.d.Clients.Mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: s.Kind}, "v1")
			if err != nil {
				continue // image() reports the kind where it maps it
			}
			key := workloadKey{gvr: m.Resource, namespace: s.Namespace, name: s.Name}
			if pf.workloads[key] == nil {
				pf.workloads[key] = &liveWorkload{done: make(chan struct{})}
				keys = append(keys, key)
			}
		}
	}
	// Every entry is made before the walk looks one up; the reads are
	// issued on a goroutine of their own, as the errgroup's limit blocks
	// whoever issues the ninth until one ends.
	go func() {
		var g errgroup.Group
		g.SetLimit(8)
		for _, key := range keys {
			lw := pf.workloads[key]
			g.Go(func() error {
				defer close(lw.done)
				lw.obj, lw.err = pf.d.Clients.Dynamic.Resource(key.gvr).Namespace(key.namespace).Get(ctx, key.name, metav1.GetOptions{})
				return nil // each workload's error is its own, reported by its step
			})
		}
		_ = g.Wait()
	}()
}

// workload is an image step's workload read up front, or read now if it
// was not.
func (pf *preflight) workload(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if lw := pf.workloads[workloadKey{gvr: gvr, namespace: namespace, name: name}]; lw != nil {
		<-lw.done
		return lw.obj, lw.err
	}
	return pf.d.Clients.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}
