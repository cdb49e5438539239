// Command upshift upgrades Kubernetes platforms in stages: backed up before,
// gated after, resumable, and reversible.
package main

import (
	"os"
	"runtime/pprof"

	"github.com/upshift-dev/upshift/internal/cli"
)

func main() {
	if p := os.Getenv("UPSHIFT_DEV_PROF"); p != "" {
		f, _ := os.CreateTemp(p, "cpu-*.pprof")
		_ = pprof.StartCPUProfile(f)
		code := cli.Execute()
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(cli.Execute())
}
