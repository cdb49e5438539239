// Command upshift upgrades Kubernetes platforms in stages: backed up before,
// gated after, resumable, and reversible.
package main

import (
	"os"

	"github.com/upshift-dev/upshift/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
