// Package supportbundle writes a support bundle: one gzip'd tar of what
// someone who was not there needs to understand an upgrade. It holds the
// runs (their records and reports), the events and the objects of the
// namespaces the runs' plans name and of the runs namespace, the last
// lines each container of those namespaces logged, and the nodes.
//
// Everything goes through the project's one redaction: runs through
// redact.Run, objects through redact.Object (Secret values and inline env
// values hidden), text through redact.Text (and container logs are masked
// by kube.ContainerLogTail first). Collecting is best effort: a part that
// cannot be read (no RBAC for it, a kind the cluster does not serve) is
// listed in the bundle's summary.txt with why, and the rest is written.
package supportbundle
