// Command crddigest finishes the CRD files controller-gen generated
// (config/crd.Finish); `make generate` runs it after controller-gen.
package main

import (
	"fmt"
	"os"

	"github.com/upshift-dev/upshift/config/crd"
)

func main() {
	for _, f := range os.Args[1:] {
		b, err := os.ReadFile(f)
		if err == nil {
			b, err = crd.Finish(b)
		}
		if err == nil {
			err = os.WriteFile(f, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "crddigest %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}
