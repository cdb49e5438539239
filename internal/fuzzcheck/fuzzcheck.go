// Package fuzzcheck holds what the fuzz targets share. Go's fuzzing has
// no limit on one input's time: an input that makes a parser work for
// minutes only shows as executions that stop counting. Within makes
// such an input a crash the fuzzer records, so a parser's bounded work
// is a property the targets check like any other.
package fuzzcheck

import (
	"fmt"
	"time"
)

// Limit is how long one input may take. A parser of outside input that
// takes longer on a few KiB is a way to hold Upshift; the fuzzer's
// workers share two cores with its coordinator, so the limit is loose.
const Limit = 5 * time.Second

// Within starts the clock for one input; call the function it returns
// when the input is done. An input still running after Limit crashes
// the fuzzing process (a panic in another goroutine cannot be
// recovered), and the fuzzer keeps it as testdata/fuzz/FuzzX/<hash>.
func Within(what string, input []byte) (done func()) {
	t := time.AfterFunc(Limit, func() {
		panic(fmt.Sprintf("%s took more than %s on an input of %d bytes: %q", what, Limit, len(input), clip(input)))
	})
	return func() { t.Stop() }
}

func clip(b []byte) []byte {
	if len(b) > 512 {
		return b[:512]
	}
	return b
}
