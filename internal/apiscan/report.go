package apiscan

import (
	"fmt"

	"github.com/upshift-dev/upshift/internal/apiremovals"
)

// Report is what a scan found.
type Report struct {
	// Minor is the Kubernetes 1.x minor the cluster was scanned for.
	Minor    int
	Findings []Finding
	// Problems are what could not be checked.
	Problems []Problem
}

// Blocks tells whether the hop must not go on: something found, or
// something that could not be checked.
func (r *Report) Blocks() bool { return len(r.Findings)+len(r.Problems) > 0 }

// Lines are the findings then the problems, one line each.
func (r *Report) Lines() []string {
	out := make([]string, 0, len(r.Findings)+len(r.Problems))
	for _, f := range r.Findings {
		out = append(out, f.String())
	}
	for _, p := range r.Problems {
		out = append(out, p.String())
	}
	return out
}

// Finding is an object written in a removed API version.
type Finding struct {
	Kind string
	// Namespace is "" for a cluster-scoped object.
	Namespace, Name string
	// Helm is the release whose manifest holds the object; nil when the
	// object's last-applied-configuration annotation says the version.
	Helm    *HelmRelease
	Removal apiremovals.Removal
}

// HelmRelease names a release's deployed revision.
type HelmRelease struct {
	Name, Namespace string
	Revision        int
}

// Object is "Kind namespace/name" or "Kind name".
func (f Finding) Object() string {
	if f.Namespace == "" {
		return f.Kind + " " + f.Name
	}
	return f.Kind + " " + f.Namespace + "/" + f.Name
}

// String is where the object was seen, the removal and the fix.
func (f Finding) String() string {
	gv, r := f.Removal.Kind.GroupVersion().String(), f.Removal
	if f.Helm == nil {
		fix := fmt.Sprintf("write apiVersion %s in the manifest it is applied from and apply it again (kubectl apply rewrites the annotation)", r.Replacement)
		if r.Replacement == "" {
			fix = "take it out of the manifests it is applied from and delete it"
		}
		return fmt.Sprintf("%s was last applied as %s (its annotation %s): %s. Fix: %s", f.Object(), gv, LastAppliedAnnotation, r, fix)
	}
	h := f.Helm
	fix := fmt.Sprintf("upgrade the release with a chart that writes %s", r.Replacement)
	if r.Replacement == "" {
		fix = "upgrade the release with a chart that no longer has it"
	}
	return fmt.Sprintf("%s is %s in the manifest of Helm release %s in namespace %s (revision %d), which Helm reads back on the release's next upgrade or rollback: %s. Fix: %s, or rewrite the release's record with `helm mapkubeapis %s --namespace %s` (the helm-mapkubeapis plugin)",
		f.Object(), gv, h.Name, h.Namespace, h.Revision, r, fix, h.Name, h.Namespace)
}

// Problem is what the scan could not check.
type Problem struct {
	// What could not be read: "horizontalpodautoscalers.autoscaling
	// (autoscaling/v2)", "Helm releases".
	What string
	Err  error
	// Fix is what lets the scan read it.
	Fix string
}

func (p Problem) String() string {
	return fmt.Sprintf("cannot check %s for removed API versions: %v. Fix: %s", p.What, p.Err, p.Fix)
}
