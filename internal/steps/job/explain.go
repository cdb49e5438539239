package job

import (
	"context"
	"fmt"
	"strings"
)

// explainFailure completes the Waiter's message about a failed Job: the
// failed pod and exit code (when the message lacks them), how to run the
// Job again, and the last lines of the container's log.
func (e *Executor) explainFailure(ctx context.Context, msg string) string {
	retry := fmt.Sprintf("; to run it again, delete %s or give the Job a new name", e.ref)
	pods, err := e.podsOf(ctx)
	if err != nil {
		return msg + retry + fmt.Sprintf(" (its pods could not be read: %v)", err)
	}
	x, ok := lastFailure(pods)
	if !ok {
		return msg + retry
	}
	if !strings.Contains(msg, fmt.Sprintf("pod %s/%s", x.pod.Namespace, x.pod.Name)) {
		msg += ": " + x.String()
	}
	msg += retry
	if x.container == "" {
		x.container = firstContainer(x)
	}
	if x.container == "" {
		return msg
	}
	lines, err := e.logTail(ctx, x)
	switch {
	case err != nil:
		return msg + fmt.Sprintf("\n(no log of container %s: %v)", x.container, err)
	case len(lines) == 0:
		return msg + fmt.Sprintf("\ncontainer %s logged nothing", x.container)
	}
	return msg + fmt.Sprintf("\nlast log lines of pod %s/%s container %s:\n  %s",
		x.pod.Namespace, x.pod.Name, x.container, strings.Join(lines, "\n  "))
}

// firstContainer is whose log tells most about a pod that failed as a
// whole: its first container.
func firstContainer(x exit) string {
	if len(x.pod.Spec.Containers) == 0 {
		return ""
	}
	return x.pod.Spec.Containers[0].Name
}

// explainWaiting adds to a timeout's message why the Job's pods have not
// run: a pod nobody scheduled is the usual reason.
func (e *Executor) explainWaiting(ctx context.Context, msg string) string {
	pods, err := e.podsOf(ctx)
	if err != nil {
		return msg
	}
	if why := notRunning(pods); why != "" {
		return msg + "; " + why
	}
	return msg
}
