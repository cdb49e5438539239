// Package version holds the build's version, stamped by the Makefile with
// -ldflags "-X github.com/upshift-dev/upshift/internal/version.Version=…".
package version

import "runtime/debug"

// Version is the release version; "dev" for an unstamped build.
var Version = "dev"

// Commit returns the VCS revision recorded by the Go toolchain, if any.
func Commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
