package job

import (
	"context"

	"github.com/upshift-dev/upshift/internal/kube"
)

// logTail reads the last lines the failed container logged.
func (e *Executor) logTail(ctx context.Context, x exit) ([]string, error) {
	return kube.ContainerLogTail(ctx, e.cs, x.pod, x.container, x.previous)
}
