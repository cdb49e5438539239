//go:build bench

package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// asked counts one tool's requests by verb and resource ("get
// deployments", "create selfsubjectrulesreviews", "get /apis" for a
// request that names no resource): where a tool's request count comes from.
type asked map[string]int

func count(evs []localcluster.AuditEvent) asked {
	a := asked{}
	for _, e := range evs {
		what := e.RequestURI
		if r := e.ObjectRef; r != nil {
			what = r.Resource
			if r.Subresource != "" {
				what += "/" + r.Subresource
			}
		} else if i := strings.IndexByte(what, '?'); i >= 0 {
			what = what[:i]
		}
		a[e.Verb+" "+what]++
	}
	return a
}

// breakdown lists the counts, most first.
func (a asked) breakdown() string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a[keys[i]] != a[keys[j]] {
			return a[keys[i]] > a[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "    %4d %s\n", a[k], k)
	}
	return b.String()
}
