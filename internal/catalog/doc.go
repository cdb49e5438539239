// Package catalog reads a platform's release catalog: the versions it can
// be upgraded to, each one's plan, the constraints the path solver
// (internal/versions) keeps, and where a cluster's running version is
// read from. A catalog is a ReleaseCatalog document in a directory
// (catalog.yaml), at an https:// URL, or in a ConfigMap (key
// catalog.yaml); see docs/catalog.md for the format.
//
// A release names its plan file, or takes the catalog's plan template
// (Go text/template with Helm's functions, as a chart's templates) filled
// with the release's version and the version it is reached from. Plans
// of a catalog that has no directory (a URL, a ConfigMap) cannot name
// local files, as an UpgradePlan resource cannot.
package catalog
