// Package report tells what a run did, in the shape of a runbook's upgrade
// report (from, to, the steps executed with their timings, validation
// results by severity, issues, what was rolled back, what to do next):
// [Build] for one run, [BuildUpgrade] for the runs of a multi-hop upgrade
// in order, [Markdown] and [UpgradeMarkdown] to render them; the structs
// are the JSON and YAML form.
//
// A report is derived from the run's record, the UpgradeRun, whenever it
// is asked for, and never stored: the record already holds every fact a
// report shows (it is saved after every transition, by the CLI and the
// controller alike, in the runs namespace), so where the controller runs
// the report is stored with the run because the run is its source. A
// report kept beside it could only fall behind it, and writing one on
// every transition would make each save as large as the run's history.
//
// Everything is pure: no IO, no clock. What a user wrote in a plan can
// carry secrets (a URL's credentials in a gate's name or a message), so
// Build reads the run through redact.Run and the reports hold nothing
// that did not pass it. What to do next is data ([Action]): the record
// and the report hold facts, and each driver renders its own commands
// ([CommandFunc]), as the engine's decisions do.
package report
