// Package installation is the installation step kind: an upgrade
// recorded in embedded-cluster's Installation resources, as
// embedded-cluster records its own.
//
// An attempt of a run has one Installation, found by a label with the
// attempt's key: the first installation step creates it, named by the
// time as embedded-cluster names them and labelled
// replicated.com/disaster-recovery=ec-install (so embedded-cluster's
// disaster recovery backs it up), its spec the newest Installation's with
// the step's merged over it. Every installation step sets its state:
// Installing, KubernetesInstalled, AddonsInstalling, AddonsInstalled,
// Installed. Earlier Installations are never touched: they are the
// cluster's history.
//
// An Installation is no backup target (a restore would delete the record
// of a failed upgrade); the Reverter marks it Failed instead, with the
// reason, as embedded-cluster marks a failed upgrade's.
package installation
