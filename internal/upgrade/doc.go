// Package upgrade takes a platform to a version of its release catalog,
// hop by hop, for every driver: Solve finds where the cluster is and the
// path (detection, Kubernetes, peers, the compatibility matrix); Hops.Run
// runs each hop's plan as its own run through the runner, resuming a hop
// left unfinished first and checking the version sources after each hop.
// A hop whose release installs a new Kubernetes minor is preceded by a
// scan of the cluster for objects in API versions that minor no longer
// serves (internal/apiscan); what it finds blocks the hop before any
// write (RemovedAPIsError).
// It prints nothing and names no command: the CLI (`upshift upgrade
// --to`) and the controller (PlatformUpgrade) render its results and
// typed errors in their own terms.
package upgrade
