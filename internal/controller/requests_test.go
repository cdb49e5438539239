package controller

import (
	"reflect"
	"testing"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestPendingRequests(t *testing.T) {
	all := map[string]string{
		// Written in another order than v1alpha1.ActionAnnotations.
		v1alpha1.AnnotationRetry:    "r1",
		v1alpha1.AnnotationRollback: "rb1",
		v1alpha1.AnnotationAbort:    "a1",
		v1alpha1.AnnotationApprove:  "go-ahead",
	}
	for _, tc := range []struct {
		name                 string
		annotations, handled map[string]string
		want                 []Request
	}{
		{"none", nil, nil, nil},
		{"all new, in annotation order", all, nil, []Request{
			{v1alpha1.AnnotationApprove, "go-ahead"},
			{v1alpha1.AnnotationAbort, "a1"},
			{v1alpha1.AnnotationRollback, "rb1"},
			{v1alpha1.AnnotationRetry, "r1"},
		}},
		{"handled values skipped", all, map[string]string{v1alpha1.AnnotationApprove: "go-ahead", v1alpha1.AnnotationRollback: "rb1"}, []Request{
			{v1alpha1.AnnotationAbort, "a1"},
			{v1alpha1.AnnotationRetry, "r1"},
		}},
		{"a new value after a handled one", map[string]string{v1alpha1.AnnotationApprove: "go-ahead@2"}, map[string]string{v1alpha1.AnnotationApprove: "go-ahead"}, []Request{
			{v1alpha1.AnnotationApprove, "go-ahead@2"},
		}},
		{"all handled", all, all, nil},
		{"empty values ask nothing", map[string]string{v1alpha1.AnnotationAbort: "", v1alpha1.AnnotationRetry: ""}, nil, nil},
		{"empty value after a handled one", map[string]string{v1alpha1.AnnotationAbort: ""}, map[string]string{v1alpha1.AnnotationAbort: "1"}, nil},
		{"other annotations ignored", map[string]string{
			"upshift.dev/frobnicate":                           "1",
			"kubectl.kubernetes.io/last-applied-configuration": "{}",
			v1alpha1.AnnotationAbort:                           "1",
		}, nil, []Request{{v1alpha1.AnnotationAbort, "1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PendingRequests(tc.annotations, tc.handled); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
