// Package liqo is Upshift's Liqo profile: a release catalog (catalog.yaml,
// plan.yaml.tmpl) that applies Liqo's own CRD files and Liqo's chart as
// rendered for the cluster, and the compatibility matrix ConfigMap of the
// Liqo upgrade controller. Its tests hold it against Liqo's released
// artifacts in ../shared/data/liqo. See README.md.
package liqo
