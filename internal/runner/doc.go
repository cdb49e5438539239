// Package runner drives runs against a cluster: it resolves a plan's
// sources, takes the lease, decides what `apply` does with the saved run,
// and lets the engine's driver move the run with real executors, backups
// and a store in the cluster. The CLI is a thin layer over it; the
// controller and the HTTP server will be too.
package runner
