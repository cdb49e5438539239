package crds_test

import (
	"slices"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/steps/crds"
)

// A crds step reaches the groups of its CRDs, each once: a stage backed
// up while it runs must hold no object of them.
func TestReachIsTheGroupsOfTheCRDs(t *testing.T) {
	objs := clienttest.Objects(t, crdYAML("a.upshift.test", "Widget")+"---\n"+crdYAML("a.upshift.test", "Gadget")+"---\n"+crdYAML("b.upshift.test", "Gizmo"))
	e, err := crds.New(v1alpha1.CRDsStep{}, objs, time.Minute, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Reach()
	slices.Sort(r.Groups)
	if want := []string{"a.upshift.test", "b.upshift.test"}; !slices.Equal(r.Groups, want) || len(r.Kinds) != 0 {
		t.Errorf("Reach = %+v, want groups %v and no kinds", r, want)
	}
}
