package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// Preflight checks a resolved plan against the cluster before any change:
// every kind is served (or defined by a CRD in the plan; a kind that
// Kubernetes removed is named with its replacement), no CRD drops a
// version its live copy still stores, every namespace and workload and
// container exists (or the plan creates it), every envKept gate's
// workload is one its stage changes (so the stage's backup holds it), and
// the credentials may do
// every write the plan needs (a SelfSubjectRulesReview per namespace,
// access reviews where its rules are incomplete). It reports every
// problem at once. It writes nothing but those reviews.
func (s *Session) Preflight(ctx context.Context, p *resolve.Plan) field.ErrorList {
	p.PackAhead()
	pf := &preflight{s: s, p: p, planned: plannedKinds(p), namespaces: plannedNamespaces(p), access: map[accessKey][]string{}, crdsSeen: map[string]bool{}, targets: map[int][]step.Ref{}}
	pf.readLiveCRDs(ctx)
	pf.readWorkloads(ctx)
	pf.readNamespaces(ctx)
	for i, st := range p.Plan.Spec.Stages {
		for j, step := range st.Steps {
			path := field.NewPath("spec").Child("stages").Index(i).Child("steps").Index(j)
			pf.at = &stepAt{stage: i, index: j}
			switch {
			case step.CRDs != nil:
				pf.objects(ctx, path.Child("crds"), p.ObjectsFor(i, j))
			case step.Manifests != nil:
				pf.objects(ctx, path.Child("manifests"), p.ObjectsFor(i, j))
			case step.Image != nil:
				pf.image(ctx, path.Child("image"), step.Image)
			case step.Job != nil:
				pf.objects(ctx, path.Child("job"), p.ObjectsFor(i, j))
				if rb := p.Objects[resolve.RollbackJobPath(i, j)]; rb != nil {
					pf.objects(ctx, path.Child("job", "rollbackJob"), rb)
				}
			case step.Helm != nil:
				pf.helm(ctx, path.Child("helm"), i, j, step.Helm)
			case step.Recreate != nil:
				pf.recreate(ctx, path.Child("recreate"), step.Recreate, p.ObjectsFor(i, j))
			case step.Freeze != nil:
				pf.freeze(ctx, path.Child("freeze"), step.Freeze)
			}
		}
		pf.at = nil
		for j, g := range st.Gates {
			pf.gate(ctx, field.NewPath("spec").Child("stages").Index(i).Child("gates").Index(j), i, g)
		}
	}
	for i, g := range p.Plan.Spec.Checks {
		pf.gate(ctx, field.NewPath("spec").Child("checks").Index(i), -1, g)
	}
	// The stored-version checks wait on the live CRDs, on a platform of
	// many CRDs the longest reads of preflight; the access reviews need
	// none of them and run meanwhile. The problems keep their order.
	stored := make(chan field.ErrorList, 1)
	go func() { stored <- pf.compareStoredVersions(ctx) }()
	walked := pf.errs
	pf.errs = nil
	pf.runNeeds(ctx)
	pf.freezeReach()
	pf.reviewAccess(ctx)
	return slices.Concat(walked, <-stored, pf.errs)
}

// gate checks what a gate (or a check) reads: its kind served, its
// reads allowed. A ready gate with ifServed on a kind the cluster does not
// serve reads nothing.
//
// stage is the gate's stage; -1 for a check (spec.checks), which has no
// backup to compare with (plan validation refuses an envKept check).
func (pf *preflight) gate(ctx context.Context, path *field.Path, stage int, g v1alpha1.Gate) {
	gp := path.String()
	if g.EnvKept != nil && stage >= 0 {
		pf.envKept(ctx, path.Child("envKept"), stage, g.EnvKept)
	}
	switch {
	case g.PodsRunning != nil:
		pf.reads(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, g.PodsRunning.Namespace, gp)
	case g.PVCsBound != nil:
		pf.reads(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, g.PVCsBound.Namespace, gp)
	case g.NodesReady != nil:
		pf.reads(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "", gp)
	case g.HelmReleases != nil:
		pf.reads(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, g.HelmReleases.Namespace, gp)
	}
	if g.Ready == nil {
		return
	}
	rp := path.Child("ready")
	gvk := schema.FromAPIVersionAndKind(g.Ready.APIVersion, g.Ready.Kind)
	if g.Ready.IfServed && !pf.served(gvk) {
		return
	}
	if gvr, _, ok := pf.resource(ctx, rp, gvk); ok {
		for _, verb := range []string{"get", "list", "watch"} {
			pf.need(verb, gvr, g.Ready.Namespace, rp.String())
		}
		pf.workloadReads(gvk, g.Ready.Namespace, rp.String())
	}
}

// served tells whether the cluster serves the kind now.
func (pf *preflight) served(gvk schema.GroupVersionKind) bool {
	_, err := pf.s.deps.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

type accessKey struct {
	verb      string
	gvr       schema.GroupVersionResource
	namespace string
}

type preflight struct {
	s          *Session
	p          *resolve.Plan
	planned    map[schema.GroupKind]plannedKind
	namespaces map[string]bool
	access     map[accessKey][]string // what needs it, by field path
	errs       field.ErrorList
	// crdsSeen are the CRDs whose first write in the plan was compared
	// with the live one.
	crdsSeen map[string]bool
	// liveCRDs are the plan's CRDs as the cluster has them, read together
	// while preflight walks the plan (preflight_livecrds.go); crdsRead is
	// closed once they are.
	liveCRDs map[string]liveCRD
	crdsRead chan struct{}
	// crdWrites are the plan's first write of each CRD, compared with the
	// live one once the walk is done.
	crdWrites []crdWrite
	// workloads are the image steps' workloads, read together while
	// preflight walks the plan (preflight_workloads.go).
	workloads map[workloadKey]*liveWorkload
	// nsLookups are the namespaces the plan names, and nsAll every one
	// when a pattern needs them, read while preflight walks the plan
	// (preflight_namespaces.go).
	nsLookups map[string]*nsLookup
	nsAll     *nsList
	// targets are each stage's objects, as its backup takes them, listed
	// once for its envKept gates (nil: not listable).
	targets map[int][]step.Ref
	// minor is the cluster's Kubernetes minor, asked once when a kind is
	// not served.
	minor                  int
	minorKnown, minorAsked bool
	// at is the step whose needs are being listed (nil for gates and the
	// run's own); writes are the steps' writes, which freezes must leave
	// alone.
	at     *stepAt
	writes []stepWrite
}

type plannedKind struct {
	resource   string
	namespaced bool
}

// plannedKinds are the kinds the plan's own CRDs define: they are not
// served yet, and need not be.
func plannedKinds(p *resolve.Plan) map[schema.GroupKind]plannedKind {
	out := map[schema.GroupKind]plannedKind{}
	for _, objs := range p.Objects {
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
			scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
			out[schema.GroupKind{Group: group, Kind: kind}] = plannedKind{resource: plural, namespaced: scope == "Namespaced"}
		}
	}
	return out
}

func plannedNamespaces(p *resolve.Plan) map[string]bool {
	out := map[string]bool{}
	for _, objs := range p.Objects {
		for _, o := range objs {
			if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" {
				out[o.GetName()] = true
			}
		}
	}
	return out
}

// resource maps a kind to its resource, from the cluster or the plan.
func (pf *preflight) resource(ctx context.Context, path *field.Path, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	m, err := pf.s.deps.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil {
		return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
	if pk, ok := pf.planned[gvk.GroupKind()]; ok {
		return gvk.GroupVersion().WithResource(pk.resource), pk.namespaced, true
	}
	if meta.IsNoMatchError(err) {
		msg := "the cluster does not serve this kind and no CRD in the plan defines it: check apiVersion and kind, or add the CRD to an earlier step"
		if removed, ok := pf.removedAPI(gvk); ok {
			msg = removed
		}
		pf.errs = append(pf.errs, field.Invalid(path, gvk.Kind+" "+gvk.GroupVersion().String(), msg))
	} else {
		pf.errs = append(pf.errs, field.InternalError(path, fmt.Errorf("map %s: %w", gvk, err)))
	}
	return schema.GroupVersionResource{}, false, false
}

func (pf *preflight) objects(ctx context.Context, path *field.Path, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		gvr, namespaced, ok := pf.resource(ctx, path, gvk)
		if !ok {
			continue
		}
		if isCRD(o) {
			pf.storedVersions(path, o)
		}
		ns := o.GetNamespace()
		what := fmt.Sprintf("%s (%s %s)", path, strings.ToLower(gvk.Kind), join(ns, o.GetName()))
		if namespaced {
			if ns == "" {
				pf.errs = append(pf.errs, field.Required(path, fmt.Sprintf("%s %s has no metadata.namespace: set it (Upshift never guesses a namespace)", strings.ToLower(gvk.Kind), o.GetName())))
				continue
			}
			pf.namespace(ctx, path, ns)
		}
		if !namespaced {
			ns = ""
		}
		// Writes, and the list/watch the wait for Current needs.
		for _, verb := range []string{"get", "list", "watch", "create", "patch", "update", "delete"} {
			pf.need(verb, gvr, ns, what)
		}
		pf.workloadReads(gvk, ns, what)
	}
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

func (pf *preflight) namespace(ctx context.Context, path *field.Path, ns string) {
	if pf.namespaces[ns] {
		return
	}
	err := pf.namespaceErr(ctx, ns)
	switch {
	case err == nil:
		pf.namespaces[ns] = true
	case apierrors.IsNotFound(err):
		pf.namespaces[ns] = true // report once
		pf.errs = append(pf.errs, field.NotFound(path.Child("namespace"), ns+": create the namespace first, or add a Namespace object to an earlier step"))
	case apierrors.IsForbidden(err):
		// Not knowing is not a reason to refuse: the access review says
		// whether the writes themselves are allowed.
	default:
		pf.errs = append(pf.errs, field.InternalError(path, fmt.Errorf("get namespace %s: %w", ns, err)))
	}
}

// plannedObject reports whether a source of the plan creates the object.
func (pf *preflight) plannedObject(gvk schema.GroupVersionKind, ns, name string) bool {
	return pf.plannedVersion(gvk, ns, name) != nil
}

// plannedVersion is the object as a source of the plan applies it, or nil.
func (pf *preflight) plannedVersion(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	for _, objs := range pf.p.Objects {
		for _, o := range objs {
			if o.GroupVersionKind().GroupKind() == gvk.GroupKind() && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
	}
	return nil
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
// as another identity (Options.PlanConfig) does not make them: its driver
// does, with rights of its own that are its installer's to grant.
func (pf *preflight) runNeeds(ctx context.Context) {
	if pf.s.opts.PlanConfig != nil {
		return
	}
	ns := pf.s.opts.Namespace
	err := pf.namespaceErr(ctx, ns) // planCS is cs here: no PlanConfig
	switch {
	case apierrors.IsNotFound(err):
		pf.need("create", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "creating namespace "+ns+" for runs and backups")
	case err == nil:
		pf.s.store.NamespaceReady() // apply need not ask again
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

// maxParallelReviews bounds the reviews in flight: one at a time they
// cost a round trip each.
const maxParallelReviews = 8

func join(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
