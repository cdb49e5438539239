package pvcsbound

import (
	"github.com/upshift-dev/upshift/internal/watchloop"

	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func claim(name string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func TestJudge(t *testing.T) {
	type look struct {
		claims []*corev1.PersistentVolumeClaim
		want   watchloop.Verdict
	}
	tests := []struct {
		name     string
		selector string
		looks    []look // the first is the first complete list
	}{
		{name: "all Bound", looks: []look{{
			claims: []*corev1.PersistentVolumeClaim{claim("data-1", corev1.ClaimBound), claim("data-0", corev1.ClaimBound)},
			want:   watchloop.Passed("2 PVCs Bound"),
		}}},
		{name: "one claim", looks: []look{{claims: []*corev1.PersistentVolumeClaim{claim("data-0", corev1.ClaimBound)}, want: watchloop.Passed("1 PVC Bound")}}},
		{name: "waits for Pending claims, naming them", looks: []look{
			{claims: []*corev1.PersistentVolumeClaim{claim("data-2", corev1.ClaimPending), claim("data-0", corev1.ClaimBound), claim("data-1", "")},
				want: watchloop.Waiting("2 of 3 PVCs in db still Pending: data-1, data-2")},
			{claims: []*corev1.PersistentVolumeClaim{claim("data-2", corev1.ClaimBound), claim("data-0", corev1.ClaimBound), claim("data-1", corev1.ClaimBound)},
				want: watchloop.Passed("3 PVCs Bound")},
		}},
		{name: "names at most five", looks: []look{{
			claims: []*corev1.PersistentVolumeClaim{claim("a", ""), claim("b", ""), claim("c", ""), claim("d", ""), claim("e", ""), claim("f", ""), claim("g", "")},
			want:   watchloop.Waiting("7 of 7 PVCs in db still Pending: a, b, c, d, e and 2 more"),
		}}},
		{name: "a Lost claim fails at once", looks: []look{{
			claims: []*corev1.PersistentVolumeClaim{claim("data-0", corev1.ClaimPending), claim("data-1", corev1.ClaimLost)},
			want:   watchloop.Failed(`PVC db/data-1 is Lost: its PersistentVolume "pv-data-1" is gone`),
		}}},
		{name: "several Lost claims are counted", looks: []look{{
			claims: []*corev1.PersistentVolumeClaim{claim("data-0", corev1.ClaimLost), claim("data-1", corev1.ClaimLost)},
			want:   watchloop.Failed(`PVC db/data-0 is Lost: its PersistentVolume "pv-data-0" is gone (and 1 more Lost)`),
		}}},
		{name: "no claim in the namespace", looks: []look{{want: watchloop.Failed("no PVCs in db")}}},
		{name: "nothing matches the selector", selector: "app=pg", looks: []look{{want: watchloop.Failed(`no PVCs match "app=pg" in db`)}}},
		{name: "claims gone later are waited for", selector: "app=pg", looks: []look{
			{claims: []*corev1.PersistentVolumeClaim{claim("data-0", corev1.ClaimPending)}, want: watchloop.Waiting("1 of 1 PVC in db still Pending: data-0")},
			{want: watchloop.Waiting(`no PVCs match "app=pg" in db any more`)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := judge{namespace: "db", selector: tt.selector}
			for i, l := range tt.looks {
				if got := j.look(l.claims, i == 0); got != l.want {
					t.Errorf("look %d:\n  got  %+v\n  want %+v", i, got, l.want)
				}
			}
		})
	}
}
