package preflight

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// egress refuses a gate whose URL is on a host the driver does not let
// plans reach (clients.Set.Egress: the controller's --gate-hosts): the
// gate would only fail once the stage has changed.
func (pf *preflight) egress(path *field.Path, g v1alpha1.Gate) {
	policy := pf.d.Clients.Egress
	check := func(p *field.Path, url string) {
		if err := policy.Allows(url); err != nil {
			pf.errs = append(pf.errs, field.Forbidden(p, err.Error()+": measure from a host the controller's --gate-hosts lists, or ask its admin to add this one"))
		}
	}
	switch {
	case g.HTTP != nil:
		check(path.Child("http", "url"), g.HTTP.URL)
	case g.Metric != nil && g.Metric.Provider.Prometheus != nil:
		check(path.Child("metric", "provider", "prometheus", "address"), g.Metric.Provider.Prometheus.Address)
	case g.Metric != nil && g.Metric.Provider.Web != nil:
		check(path.Child("metric", "provider", "web", "url"), g.Metric.Provider.Web.URL)
	}
}
