// Package liqo is Upshift's Liqo profile: a release catalog (catalog.yaml,
// plan.yaml.tmpl) that upgrades Liqo on its real resource names, the
// compatibility matrix ConfigMap of the Liqo upgrade controller, and a
// Liqo-shaped v1.0.0 install (install/v1.0.0) to try it on. See README.md.
package liqo
