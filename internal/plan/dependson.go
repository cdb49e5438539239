package plan

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// validateDependsOn checks a stage's graph: every dependency names another
// step of the same stage, and there is no cycle.
func validateDependsOn(stagePath *field.Path, st v1alpha1.Stage) field.ErrorList {
	var errs field.ErrorList
	index := map[string]int{}
	for j, s := range st.Steps {
		index[s.Name] = j
	}
	for j, s := range st.Steps {
		for k, dep := range s.DependsOn {
			p := stagePath.Child("steps").Index(j).Child("dependsOn").Index(k)
			switch _, ok := index[dep]; {
			case dep == s.Name:
				errs = append(errs, field.Invalid(p, dep, "a step cannot depend on itself"))
			case !ok:
				errs = append(errs, field.NotFound(p, dep+": dependsOn names steps of the same stage"))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if cycle := findCycle(st, index); cycle != nil {
		errs = append(errs, field.Invalid(stagePath.Child("steps"), strings.Join(cycle, " -> "), "dependsOn makes a cycle: no step of it could ever start"))
	}
	return errs
}

// findCycle returns the names along a dependency cycle, or nil.
func findCycle(st v1alpha1.Stage, index map[string]int) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(st.Steps))
	var path []string
	var visit func(j int) []string
	visit = func(j int) []string {
		state[j] = onPath
		path = append(path, st.Steps[j].Name)
		for _, dep := range st.Steps[j].DependsOn {
			k := index[dep]
			switch state[k] {
			case onPath:
				for i, n := range path {
					if n == dep {
						return append(append([]string{}, path[i:]...), dep)
					}
				}
			case unseen:
				if c := visit(k); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[j] = done
		return nil
	}
	for j := range st.Steps {
		if state[j] == unseen {
			if c := visit(j); c != nil {
				return c
			}
		}
	}
	return nil
}
