package localcluster_test

import (
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

// BenchmarkStartStop measures a warm start (binaries present) to a usable
// cluster: API ready, nodes Ready, default service account.
//
//	go test -run '^$' -bench StartStop -benchtime 5x ./internal/localcluster
func BenchmarkStartStop(b *testing.B) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c, err := testenv.StartTied(localcluster.Options{Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/ready")
}
