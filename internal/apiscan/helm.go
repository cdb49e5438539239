package apiscan

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/apiremovals"
	"github.com/upshift-dev/upshift/internal/helmx"
)

// helmFix is the access reading every release needs: Helm keeps them in
// Secrets of their namespaces.
const helmFix = "grant list on secrets in every namespace (Helm keeps its releases in Secrets; a ClusterRole bound by a ClusterRoleBinding) to whoever runs the upgrade"

// manifestDoc is what a manifest's document says of itself.
type manifestDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// scanManifest reports the objects of a release's manifest written in a
// version removed at or before minor. namespaced tells, for a removed
// kind, whether its objects live in a namespace (from discovery of its
// replacement; a kind unknown there keeps the document's namespace): a
// chart's templates usually leave metadata.namespace to the release's.
// A document that does not parse is a problem: Helm would not read it
// back either.
func scanManifest(m helmx.Manifest, minor int, namespaced map[string]bool) ([]Finding, []Problem) {
	var out []Finding
	var problems []Problem
	rel := &HelmRelease{Name: m.Name, Namespace: m.Namespace, Revision: m.Revision}
	docs := releaseutil.SplitManifests(m.Manifest)
	keys := slices.Collect(maps.Keys(docs))
	sort.Sort(releaseutil.BySplitManifestsOrder(keys)) // the manifest's order
	for _, k := range keys {
		doc := docs[k]
		var d manifestDoc
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			problems = append(problems, Problem{
				What: fmt.Sprintf("Helm release %s in namespace %s (revision %d)", m.Name, m.Namespace, m.Revision),
				Err:  fmt.Errorf("a document of its manifest does not parse: %w", err),
				Fix:  "upgrade or roll back the release with helm so its deployed revision holds a manifest Helm can read"})
			continue
		}
		if d.APIVersion == "" || d.Kind == "" {
			continue // a comment or an empty document
		}
		gvk := schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)
		for _, r := range apiremovals.Removed([]schema.GroupVersionKind{gvk}, 0, minor) {
			ns := d.Metadata.Namespace
			if ns == "" && namespaced[d.Kind] {
				ns = m.Namespace
			}
			out = append(out, Finding{Kind: d.Kind, Namespace: ns, Name: d.Metadata.Name, Helm: rel, Removal: r})
		}
	}
	return out, problems
}
