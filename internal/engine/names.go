package engine

import (
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func lower(s string) string { return strings.ToLower(s) }

func join(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// shownEnvNames bounds the variables an envKept gate's name lists: the
// Liqo list (six) fits, a longer one is counted.
const shownEnvNames = 6

// envKeptName: "envKept deployment liqo/liqo-controller-manager container
// controller-manager: POD_NAMESPACE, CLUSTER_ID". Names, never values.
func envKeptName(g *v1alpha1.EnvKeptGate) string {
	s := fmt.Sprintf("envKept %s %s container %s", lower(g.Kind), join(g.Namespace, g.Name), g.Container)
	switch n := len(g.Names); {
	case n == 0:
		return s + ": every variable"
	case n <= shownEnvNames:
		return s + ": " + strings.Join(g.Names, ", ")
	default:
		return fmt.Sprintf("%s: %s and %d more", s, strings.Join(g.Names[:shownEnvNames-1], ", "), n-shownEnvNames+1)
	}
}
