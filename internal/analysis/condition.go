package analysis

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// costLimit bounds one condition's evaluation: a condition is a tenant's
// input, and one that loops over a large answer must not hold the
// controller. A comparison costs a few units; a filter over a vector of
// a thousand samples a few thousand.
const costLimit = 100_000

// environment is the CEL environment every condition compiles in:
// `result` of any type, numbers compared across int and double (result <
// 1 holds for 0.5), and the math and string extensions (math.isNaN).
var environment = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("result", cel.DynType),
		cel.CrossTypeNumericComparisons(true),
		ext.Math(),
		ext.Strings(),
	)
})

// Conditions are a metric's success and failure conditions, compiled.
type Conditions struct {
	success, failure cel.Program
}

// Compile compiles the metric's conditions. path is the metric's field
// path, which every error names.
func Compile(m v1alpha1.Metric, path *field.Path) (*Conditions, field.ErrorList) {
	var errs field.ErrorList
	c := &Conditions{}
	var err *field.Error
	success := m.SuccessCondition
	if success == "" && m.FailureCondition == "" {
		switch {
		case m.Provider.Job != nil:
			success = "result == 0" // a Job's exit code: 0 is success, as a shell's
		case m.Provider.Web != nil && m.Provider.Web.StatusCode:
			success = "result >= 200 && result < 300"
		}
	}
	if c.success, err = compile(success, path.Child("successCondition")); err != nil {
		errs = append(errs, err)
	}
	if c.failure, err = compile(m.FailureCondition, path.Child("failureCondition")); err != nil {
		errs = append(errs, err)
	}
	return c, errs
}

func compile(expr string, path *field.Path) (cel.Program, *field.Error) {
	if expr == "" {
		return nil, nil
	}
	env, err := environment()
	if err != nil {
		return nil, field.InternalError(path, err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, field.Invalid(path, expr, fmt.Sprintf("not a CEL expression: %v; write one over result, such as result < 0.05", iss.Err()))
	}
	if t := ast.OutputType(); t != types.BoolType && t != types.DynType {
		return nil, field.Invalid(path, expr, fmt.Sprintf("evaluates to %s, not a bool; compare result with something, such as result < 0.05", t))
	}
	prg, err := env.Program(ast, cel.CostLimit(costLimit))
	if err != nil {
		return nil, field.Invalid(path, expr, err.Error())
	}
	return prg, nil
}

// Judge is a measured value's verdict, as Argo Rollouts judges it: with
// both conditions, failed when the failure condition holds, successful
// when the success one does, inconclusive when neither; with one, that
// one decides; with none, every value is successful. A condition that
// cannot be evaluated on the value (a field it names is missing, it is
// not a bool, it costs too much) makes the measurement an error, with a
// message saying why.
func (c *Conditions) Judge(value any) (v1alpha1.AnalysisPhase, string) {
	failed, err := c.holds(c.failure, value)
	if err != nil {
		return v1alpha1.AnalysisError, "failureCondition: " + err.Error()
	}
	succeeded, err := c.holds(c.success, value)
	if err != nil {
		return v1alpha1.AnalysisError, "successCondition: " + err.Error()
	}
	switch {
	case c.failure != nil && failed:
		return v1alpha1.AnalysisFailed, ""
	case c.success != nil && succeeded:
		return v1alpha1.AnalysisSuccessful, ""
	case c.success != nil && c.failure != nil:
		return v1alpha1.AnalysisInconclusive, "neither condition holds"
	case c.success != nil:
		return v1alpha1.AnalysisFailed, ""
	}
	return v1alpha1.AnalysisSuccessful, ""
}

// holds evaluates one condition on the value (false when it is unset).
func (c *Conditions) holds(p cel.Program, value any) (bool, error) {
	if p == nil {
		return false, nil
	}
	out, _, err := p.Eval(map[string]any{"result": value})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluates to %v, not a bool", out.Value())
	}
	return b, nil
}
