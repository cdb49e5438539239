// Package embeddedcluster is the embedded-cluster profile's catalog
// (README.md): 2.16.0's install, 2.17.0, and 2.17.1 built to fail. FS
// embeds it so `upshift demo --profile embedded-cluster` carries it
// wherever it runs.
package embeddedcluster

import "embed"

// FS holds catalog.yaml, plan.yaml.tmpl (2.17.0's and 2.17.1's plan),
// install/ (with k0s's ClusterConfig as 2.16.0 has it) and charts/.
//
//go:embed catalog.yaml plan.yaml.tmpl install all:charts
var FS embed.FS

// Versions of the catalog the demo names.
const (
	Installed = "2.16.0+k8s-1.33"
	Good      = "2.17.0+k8s-1.34"
	Broken    = "2.17.1+k8s-1.34"
	// K0s is the k0s 2.17.0 and 2.17.1 move the nodes to.
	K0s = "v1.34.1+k0s.0"
)

// CRDs are the other projects' CRDs the profile writes (k0s's autopilot
// Plan and ClusterConfig, embedded-cluster's Installation): an
// embedded-cluster cluster has them; Upshift does not ship them.
var CRDs = []string{"plans.autopilot.k0sproject.io", "clusterconfigs.k0s.k0sproject.io", "installations.embeddedcluster.replicated.com"}
