package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

func ExampleNew() {
	s, err := New(Config{Count: 3, Latency: map[string]time.Duration{OpUpgradeMaster: 0}})
	if err != nil {
		panic(err)
	}
	op, _ := s.UpgradeMaster(context.Background(), "sim-0002", "1.32.0")
	st, _ := s.GetOperationStatus(context.Background(), "sim-0002", op)
	v, _ := s.GetVersion(context.Background(), "sim-0002")
	fmt.Println(op.Type, st == pluginsdk.OperationDone, v.Master)
	// Output: UpgradeMaster true 1.32.0
}
