package controller

import "github.com/upshift-dev/upshift/api/v1alpha1"

// PendingRequests lists the action annotations whose value differs from
// the one last handled, in v1alpha1.ActionAnnotations order. An empty
// value asks nothing (removing an annotation is no request).
func PendingRequests(annotations, handled map[string]string) []Request {
	var out []Request
	for _, a := range v1alpha1.ActionAnnotations {
		v, ok := annotations[a]
		if !ok || v == "" || handled[a] == v {
			continue
		}
		out = append(out, Request{Annotation: a, Value: v})
	}
	return out
}
