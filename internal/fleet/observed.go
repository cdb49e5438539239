package fleet

import (
	"time"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// Observed is what the controller read for one decision.
type Observed struct {
	Now time.Time
	// Generation is the ClusterVersion's metadata.generation: a new one
	// starts a new rollout.
	Generation int64
	// Versions and Statuses of the clusters read for this decision.
	Versions map[string]pluginsdk.ClusterVersion
	Statuses map[string]pluginsdk.ClusterStatus
	// AllStatuses: Statuses holds every cluster, read recently enough to
	// judge the availability budget on.
	AllStatuses bool
	// Ops are the reports of the operations in flight, by cluster.
	Ops map[string]pluginsdk.OperationReport
	// Lookups are what the plugin said of the calls whose answers were
	// lost (intent.go), by cluster.
	Lookups map[string]Lookup
	// Answers are the errors the plugin answered about clusters, by
	// cluster ("GetVersion with NotFound: ..."): each waits, marked,
	// and is not asked for again in this decision.
	Answers map[string]string
	// CanRevert: the plugin serves RevertCluster.
	CanRevert bool
	// Approve is a new upshift.dev/approve value, if any; Retry: a new
	// upshift.dev/retry value waits, RetryValue.
	Approve    string
	Retry      bool
	RetryValue string
}

// Need is what Decide must read before it can go on.
type Need struct {
	// Versions and statuses of these clusters.
	Clusters []string
	// AllStatuses: every cluster's status, for the availability budget.
	AllStatuses bool
}

func (n Need) empty() bool { return len(n.Clusters) == 0 && !n.AllStatuses }
