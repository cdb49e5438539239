// Package bundle makes a plan file runnable by the controller, which
// cannot read files: every file the plan names is served over HTTPS (its
// sources as YAML streams, its local charts as archives) and the plan is
// rewritten to fetch them by URL, and its values files are folded into
// helm.values. The demo uses it to run the same plan file through the
// controller that it ran through the CLI.
package bundle
