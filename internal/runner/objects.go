package runner

import (
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/source"
)

// Objects reads ConfigMaps and Secrets as the plan acts
// (Options.PlanConfig: the controller's impersonated ServiceAccount).
func (s *Session) Objects() source.Objects {
	cfg := s.opts.PlanConfig
	if cfg == nil {
		cfg = &rest.Config{}
	}
	return resolve.ClusterObjects(s.planCS, cfg)
}
