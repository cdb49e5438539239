package recreate_test

import (
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/step"
)

func objectRef(r step.Ref) kube.ObjectRef { return r }
