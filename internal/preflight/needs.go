package preflight

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/plan"
)

// accessKey is one access the plan needs: a verb on a resource in a
// namespace ("": cluster-wide).
type accessKey struct {
	verb      string
	gvr       schema.GroupVersionResource
	namespace string
}

// reads are the list and watch a watching gate needs.
func (pf *preflight) reads(gvr schema.GroupVersionResource, ns, what string) {
	for _, verb := range []string{"list", "watch"} {
		pf.need(verb, gvr, ns, what)
	}
}

// workloadReads are what judging a workload's readiness reads besides
// itself: its pods, and a Deployment's ReplicaSets.
func (pf *preflight) workloadReads(gvk schema.GroupVersionKind, ns, what string) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	if gvk.Group == "batch" && gvk.Kind == "Job" {
		// A failed Job's message carries its pod's log tail.
		for _, verb := range []string{"list", "watch"} {
			pf.need(verb, pods, ns, what)
		}
		pf.need("get", schema.GroupVersionResource{Version: "v1", Resource: "pods/log"}, ns, what)
		return
	}
	if gvk.Group != "apps" {
		return
	}
	switch gvk.Kind {
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet":
	default:
		return
	}
	for _, verb := range []string{"list", "watch"} {
		pf.need(verb, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ns, what)
		if gvk.Kind == "Deployment" {
			pf.need(verb, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, ns, what)
		}
	}
}

func (pf *preflight) need(verb string, gvr schema.GroupVersionResource, ns, what string) {
	k := accessKey{verb: verb, gvr: gvr, namespace: ns}
	pf.access[k] = append(pf.access[k], what)
	if op := admissionOperation[verb]; op != "" && pf.at != nil {
		pf.writes = append(pf.writes, stepWrite{at: *pf.at, w: plan.Write{Group: gvr.Group, Resource: gvr.Resource, Namespace: ns, Operation: op}})
	}
}

// runNeeds are the writes every run makes: its record and backups
// (Secrets), its lease, and its namespace when missing. A plan that acts
// as another identity (no Deps.RunsNamespace) does not make them: its
// driver does, with rights of its own that are its installer's to grant.
func (pf *preflight) runNeeds(ctx context.Context) {
	ns := pf.d.RunsNamespace
	if ns == "" {
		return
	}
	err := pf.namespaceErr(ctx, ns) // the plan's client writes the runs here
	switch {
	case apierrors.IsNotFound(err):
		pf.need("create", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "creating namespace "+ns+" for runs and backups")
	case err == nil:
		if pf.d.RunsNamespaceReady != nil {
			pf.d.RunsNamespaceReady() // apply need not ask again
		}
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	for _, verb := range []string{"get", "list", "create", "update", "patch", "delete"} {
		pf.need(verb, secrets, ns, "the run record and backups in "+ns)
	}
	for _, verb := range []string{"get", "create", "update"} {
		pf.need(verb, leases, ns, "the run's lease in "+ns)
	}
}
