// Package cozystack is Upshift's CozyStack profile (the v0.x generation):
// a release catalog (catalog.yaml, plan.yaml.tmpl) with the upgrade
// runbook's success criteria as checks, and a CozyStack-shaped v0.35.5
// install (install/v0.35.5) to try it on. See README.md.
package cozystack
