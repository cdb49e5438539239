package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is upshift.dev/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the kinds of this group version. It is
	// apimachinery's builder, which controller-runtime accepts as well, so
	// the API does not depend on controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds UpgradePlan, UpgradeRun, PlatformUpgrade,
	// ClusterVersion, AppRollout and their lists to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&UpgradePlan{}, &UpgradePlanList{},
		&UpgradeRun{}, &UpgradeRunList{},
		&PlatformUpgrade{}, &PlatformUpgradeList{},
		&ClusterVersion{}, &ClusterVersionList{},
		&AppRollout{}, &AppRolloutList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
