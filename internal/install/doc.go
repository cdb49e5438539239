// Package install reads Upshift's install artifacts as Kubernetes objects
// so tests can check them: the Helm chart (charts/upshift) rendered with
// Helm's SDK, the kustomize overlay (config/default) built with kustomize's
// API, the RBAC rules they grant, and the metrics the Grafana dashboard
// queries. It writes nothing and talks to no cluster.
package install
