package apiscan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"

	"github.com/upshift-dev/upshift/internal/apiremovals"
	"github.com/upshift-dev/upshift/internal/clients"
)

// Scan looks through the cluster cs reaches for objects written in API
// versions Kubernetes 1.minor does not serve (removed in it or before):
// their last-applied annotations and the manifests of Helm releases. What
// cannot be read is in the report's problems; an error is returned only
// when discovery fails as a whole or ctx ends.
func Scan(ctx context.Context, cs *clients.Set, minor int) (*Report, error) {
	rep := &Report{Minor: minor}
	removals := apiremovals.Removed(apiremovals.Kinds(), 0, minor)
	lists, err := cs.Clientset.Discovery().ServerPreferredResources()
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		// An aggregated API that does not answer: only a group the
		// removals' kinds live in matters.
		needed := neededGroups(removals)
		for _, gv := range slices.SortedFunc(maps.Keys(failed.Groups), func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) }) {
			if needed[gv.Group] {
				rep.Problems = append(rep.Problems, Problem{What: "API group " + gv.String(), Err: failed.Groups[gv],
					Fix: "make the API server serve it again (its APIService must be Available), then run the upgrade again"})
			}
		}
	case err != nil:
		return nil, fmt.Errorf("discover the cluster's API resources: %w", err)
	}
	ts := targets(lists, removals)
	namespaced := map[string]bool{}
	seen := map[types.UID]bool{}
	for _, t := range ts {
		namespaced[t.Kind] = t.Namespaced
		found, err := scanLastApplied(ctx, cs.Metadata, t, minor, seen)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{What: t.What(), Err: err, Fix: listFix(t)})
			continue
		}
		rep.Findings = append(rep.Findings, found...)
	}
	releases, err := cs.Helm.Deployed(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{What: "Helm releases", Err: err, Fix: helmFix})
		return rep, nil
	}
	for _, m := range releases {
		found, problems := scanManifest(m, minor, namespaced)
		rep.Findings = append(rep.Findings, found...)
		rep.Problems = append(rep.Problems, problems...)
	}
	return rep, nil
}
