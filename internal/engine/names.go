package engine

import "strings"

func lower(s string) string { return strings.ToLower(s) }

func join(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
