package v1alpha1

import "strings"

// Describe says what a freeze denies, for messages and previews:
// "CREATE of foreignclusters.liqo.io; DELETE of configmaps in namespaces
// liqo, tenant-a". Names only: the message is left out.
func (f *FreezeStep) Describe() string {
	var rules []string
	for _, r := range f.Rules {
		var res []string
		for _, g := range r.APIGroups {
			for _, name := range r.Resources {
				if g != "" {
					name += "." + g
				}
				res = append(res, name)
			}
		}
		rules = append(rules, strings.Join(r.Operations, ", ")+" of "+strings.Join(res, ", "))
	}
	where := " in every namespace"
	if len(f.Namespaces) > 0 {
		where = " in namespaces " + strings.Join(f.Namespaces, ", ")
	}
	return strings.Join(rules, "; ") + where
}
