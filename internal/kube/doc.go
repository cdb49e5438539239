// Package kube tells whether Kubernetes objects are ready, and waits until
// they are.
//
// The story: the engine has just applied a change and must know, as soon
// as possible, whether the objects it touched settled (Current) or broke
// (Failing). Readiness rules come from kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status); this package adds only what
// kstatus cannot see from the object alone:
//
//   - a workload whose new pods crash or cannot pull their image is Failing
//     at once, instead of InProgress until progressDeadlineSeconds;
//   - a Job is Current only when it completed, and its failure names the
//     pod, container and exit code that failed.
//
// [Evaluate] is the pure part and is table-tested. [Waiter] is the thin IO
// part: it watches the object and its pods with informers, re-evaluates on
// every event (and every few seconds as a fallback) and returns on Current,
// Failing or timeout. Transient API errors are retried by the informers and
// never count as Failing; the Waiter is tested against a real control plane.
//
// A run's waits share informers ([Cache]), which may lag this process's
// own writes, so a wait must not judge an object older than its caller's
// last write of it. That freshness is the caller's to give: the answer to
// the write the wait follows ([Waiter.WaitWritten]), or the [Answers] its
// caller recorded through an [Applier] and handed the Waiter
// ([Waiter.WithAnswers]); when it gives neither, a consistent list of the
// wait's objects. kube keeps no scope of its own: which writes the
// answers vouch for, and for how long, only the caller knows.
package kube
