package preflight

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// Deps are what preflight needs of its driver (a runner.Session): the
// clients the plan acts with and the few things only the driver knows.
type Deps struct {
	// Clients are the plan's shared clients: its mapper, dynamic client,
	// CRD client and discovery.
	Clients *clients.Set
	// Client is the plan's typed client without the lease's fence: the
	// access reviews it creates are asked before the lease is taken.
	Client kubernetes.Interface
	// RunsNamespace is where the run's record, backups and lease go when
	// the plan's credentials write them too, so preflight checks those
	// writes; "" when the driver writes them as itself (a plan acting as
	// its ServiceAccount), with rights that are its installer's to grant.
	RunsNamespace string
	// RunsNamespaceReady, if set, is told that RunsNamespace was found,
	// so the run that follows need not ask again.
	RunsNamespaceReady func()
	// Executor builds a step's executor as a run would (the driver owns
	// how): a chart rendered against the cluster, a stage's targets.
	Executor func(stage, index int) (step.Executor, error)
	// Ahead, if set, is the first stage's snapshot read ahead beside
	// preflight (nil when there is none): the CRDs it holds are not read
	// twice.
	Ahead func(ctx context.Context) *backup.Snapshot
}

// Run checks a resolved plan against the cluster before any change:
// every kind is served (or defined by a CRD in the plan; a kind that
// Kubernetes removed is named with its replacement), no CRD drops a
// version its live copy still stores, every namespace and workload and
// container exists (or the plan creates it), every envKept gate's
// workload is one its stage changes (so the stage's backup holds it), and
// the credentials may do every write the plan needs (a
// SelfSubjectRulesReview per namespace, access reviews where its rules
// are incomplete). It reports every problem at once. It writes nothing
// but those reviews.
func Run(ctx context.Context, d Deps, p *resolve.Plan) field.ErrorList {
	pf := &preflight{d: d, p: p, planned: plannedKinds(p), namespaces: plannedNamespaces(p), access: map[accessKey][]string{}, crdsSeen: map[string]bool{}, targets: map[int][]step.Ref{}}
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
			case step.HelmUninstall != nil:
				pf.helmUninstall(ctx, path.Child("helmUninstall"), i, j, step.HelmUninstall)
			case step.Recreate != nil:
				pf.recreate(ctx, path.Child("recreate"), step.Recreate, p.ObjectsFor(i, j))
			case step.Freeze != nil:
				pf.freeze(ctx, path.Child("freeze"), step.Freeze)
			case step.Approval != nil, step.Pause != nil:
				// they write nothing
			default:
				pf.rendered(ctx, path.Child(step.Kind()), i, j)
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
	pf.egress(path, g)
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
	_, err := pf.d.Clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

type preflight struct {
	d          Deps
	p          *resolve.Plan
	planned    map[schema.GroupKind]plannedKind
	namespaces map[string]bool
	access     map[accessKey][]string // what needs it, by field path
	errs       field.ErrorList
	// crdsSeen are the CRDs whose first write in the plan was compared
	// with the live one.
	crdsSeen map[string]bool
	// liveCRDs are the plan's CRDs as the cluster has them, read together
	// while preflight walks the plan (livecrds.go); crdsRead is
	// closed once they are.
	liveCRDs map[string]liveCRD
	crdsRead chan struct{}
	// crdWrites are the plan's first write of each CRD, compared with the
	// live one once the walk is done.
	crdWrites []crdWrite
	// workloads are the image steps' workloads, read together while
	// preflight walks the plan (workloads.go).
	workloads map[workloadKey]*liveWorkload
	// nsLookups are the namespaces the plan names, and nsAll every one
	// when a pattern needs them, read while preflight walks the plan
	// (namespaces.go).
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
