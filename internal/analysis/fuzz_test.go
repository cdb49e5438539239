package analysis

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fuzzcheck"
)

// FuzzConditions compiles an AppRollout metric's success and failure
// conditions (a tenant's CEL) and judges fuzzed measurements with them.
// A refused condition names its field; a compiled one judges every value
// within the cost limit, to one of the verdicts, with a message when it
// is an error or inconclusive.
func FuzzConditions(f *testing.F) {
	f.Add("result < 0.05", "", 0.01, "x")
	f.Add("result >= 200 && result < 300", "result >= 500", 503.0, "")
	f.Add("math.isNaN(result)", "", 0.0, "")
	f.Add("", "result.exists(x, x > 1)", 1.0, "a,b")
	f.Add(`result.split(",").size() > 1`, "", 0.0, "a,b,c")
	f.Add(`[1,2,3].map(x, [1,2,3].map(y, x*y)).size() > 0`, "", 0.0, "")
	f.Fuzz(func(t *testing.T, success, failure string, num float64, str string) {
		if len(success)+len(failure)+len(str) > 4<<10 {
			return
		}
		defer fuzzcheck.Within("a condition's compile and evaluation", []byte(success+"\n"+failure))()
		path := field.NewPath("spec", "analysis", "metrics").Index(0)
		c, errs := Compile(v1alpha1.Metric{Name: "m", SuccessCondition: success, FailureCondition: failure}, path)
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, path.String()+".") {
				t.Fatalf("a refused condition names %q, not its field: %v", e.Field, e)
			}
		}
		if len(errs) > 0 {
			return
		}
		for _, value := range []any{num, int64(num), str, []any{num, str}, map[string]any{"value": num, "name": str}} {
			phase, msg := c.Judge(value)
			switch phase {
			case v1alpha1.AnalysisSuccessful, v1alpha1.AnalysisFailed:
			case v1alpha1.AnalysisError, v1alpha1.AnalysisInconclusive:
				if msg == "" {
					t.Fatalf("verdict %s on %v without a message", phase, value)
				}
			default:
				t.Fatalf("Judge(%v) = %q, not a verdict", value, phase)
			}
		}
	})
}
