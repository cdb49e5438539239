// Package resolve turns a loaded plan into a resolved one (Plan): every
// source of every step read (files, URLs, charts, ConfigMaps and Secrets
// of the plan's namespace) and decoded, keyed by the field path of its
// step (SourcePath, HelmChartPath, ...), with one digest over the spec and
// every source.
//
// A run executes the resolved plan, never the files it came from: the run
// record keeps every source (PackedSources), so any machine resumes the
// run, or rolls it back, without the plan's directory, repository or
// registry, and with the content exactly as it was read when the run
// started (FromSources rebuilds the plan from it). The digest tells a
// changed plan from the same one applied again.
package resolve
