package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// verdict is a Deployment's health by kstatus, the judgement every other
// Upshift wait uses: Current once its new pods are all updated, ready by
// their readiness probe (the rollout's healthCheck) and available.
type verdict struct {
	current, failed bool
	message         string
}

func health(d *appsv1.Deployment) verdict {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return verdict{message: err.Error()}
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apps/v1") // a typed read leaves TypeMeta empty; kstatus judges by kind
	u.SetKind("Deployment")
	res, err := status.Compute(u)
	if err != nil {
		return verdict{message: err.Error()}
	}
	return verdict{current: res.Status == status.CurrentStatus, failed: res.Status == status.FailedStatus, message: res.Message}
}
