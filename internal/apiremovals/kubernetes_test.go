package apiremovals

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRemoved(t *testing.T) {
	hpaBeta2 := gvk("autoscaling/v2beta2", "HorizontalPodAutoscaler")
	hpaBeta1 := gvk("autoscaling/v2beta1", "HorizontalPodAutoscaler")
	hpa := gvk("autoscaling/v2", "HorizontalPodAutoscaler")
	cronBeta := gvk("batch/v1beta1", "CronJob")
	fsBeta2 := gvk("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema")
	fsBeta3 := gvk("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema")
	ingressBeta := gvk("networking.k8s.io/v1beta1", "Ingress")
	crdBeta := gvk("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition")
	widget := gvk("example.com/v1beta1", "Widget")
	for _, tt := range []struct {
		name     string
		kinds    []schema.GroupVersionKind
		from, to int
		want     []string // "apiVersion Kind@minor"
	}{
		{"a hop to the removing minor", []schema.GroupVersionKind{hpaBeta2}, 25, 26, []string{"autoscaling/v2beta2 HorizontalPodAutoscaler@26"}},
		{"a hop that stops before it", []schema.GroupVersionKind{hpaBeta2}, 24, 25, nil},
		{"a hop from the removing minor: already gone", []schema.GroupVersionKind{hpaBeta2}, 26, 27, nil},
		{"several minors at once", []schema.GroupVersionKind{hpaBeta1, hpaBeta2, fsBeta2, fsBeta3, hpa}, 24, 30,
			[]string{"autoscaling/v2beta1 HorizontalPodAutoscaler@25", "autoscaling/v2beta2 HorizontalPodAutoscaler@26", "flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema@29"}},
		{"from 0: everything a 1.34 cluster no longer serves", []schema.GroupVersionKind{ingressBeta, crdBeta, cronBeta, fsBeta3}, 0, 34,
			[]string{"networking.k8s.io/v1beta1 Ingress@22", "apiextensions.k8s.io/v1beta1 CustomResourceDefinition@22", "batch/v1beta1 CronJob@25", "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema@32"}},
		{"a kind twice is reported once", []schema.GroupVersionKind{cronBeta, cronBeta}, 24, 25, []string{"batch/v1beta1 CronJob@25"}},
		{"served versions and custom kinds are not in the table", []schema.GroupVersionKind{hpa, widget}, 0, 40, nil},
		{"a downgrade removes nothing", []schema.GroupVersionKind{hpaBeta2}, 27, 24, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range Removed(tt.kinds, tt.from, tt.to) {
				got = append(got, r.Kind.GroupVersion().String()+" "+r.Kind.Kind+"@"+strconv.Itoa(r.RemovedIn))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Removed(%v, %d, %d) = %v, want %v", tt.kinds, tt.from, tt.to, got, tt.want)
			}
		})
	}
}

func TestRemovalNamesTheReplacement(t *testing.T) {
	for kind, want := range map[schema.GroupVersionKind]string{
		gvk("autoscaling/v2beta2", "HorizontalPodAutoscaler"): "autoscaling/v2beta2 HorizontalPodAutoscaler was removed in Kubernetes 1.26: use autoscaling/v2",
		gvk("policy/v1beta1", "PodDisruptionBudget"):          "policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25: use policy/v1 (an empty spec.selector selects every pod of the namespace)",
		gvk("policy/v1beta1", "PodSecurityPolicy"):            "policy/v1beta1 PodSecurityPolicy was removed in Kubernetes 1.25: the kind is gone: use Pod Security Admission",
	} {
		rs := Removed([]schema.GroupVersionKind{kind}, 0, 34)
		if len(rs) != 1 || !strings.HasPrefix(rs[0].String(), want) {
			t.Errorf("%s: got %v, want a removal saying %q", kind, rs, want)
		}
	}
}

// Every row names what to do: a replacement that the table itself does
// not remove, or a note.
func TestEveryRemovalSaysWhatToUse(t *testing.T) {
	for k, r := range removals {
		switch {
		case r.replacement == "" && r.note == "":
			t.Errorf("%s: neither a replacement nor a note", k)
		case r.in < 16 || r.in > 40:
			t.Errorf("%s: removed in 1.%d, outside the releases the table covers", k, r.in)
		case r.replacement != "":
			if _, gone := removals[gvk(r.replacement, k.Kind)]; gone {
				t.Errorf("%s: its replacement %s is itself removed", k, r.replacement)
			}
		}
	}
}

// Kinds is the whole table, in a stable order: a scan asking Removed
// about them all up to 1.34 gets every row.
func TestKindsIsTheWholeTable(t *testing.T) {
	kinds := Kinds()
	if len(kinds) != len(removals) || len(Removed(kinds, 0, 34)) != len(removals) {
		t.Fatalf("Kinds() has %d kinds, Removed of them to 1.34 %d; the table has %d rows", len(kinds), len(Removed(kinds, 0, 34)), len(removals))
	}
	if !reflect.DeepEqual(kinds, Kinds()) {
		t.Error("Kinds() changes order between calls")
	}
}
