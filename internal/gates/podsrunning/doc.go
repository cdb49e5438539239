// Package podsrunning is the `podsRunning` gate: every pod a label
// selector matches in a namespace must be Running and Ready, with no
// container restarting more than maxRestarts times while the gate waits.
//
// The gate watches the pods with an informer and judges the whole set after
// the first complete list and after every change, so it passes the moment
// the last pod turns Ready and fails the moment one cannot:
//
//   - a container waiting for a reason that does not heal without a change
//     to the pod (kube.StuckReason: CrashLoopBackOff, ImagePullBackOff,
//     ErrImageNeverPull, InvalidImageName, CreateContainerConfigError)
//     fails the gate at once, naming pod and container; a first
//     ErrImagePull is waited for, since it heals or turns into
//     ImagePullBackOff within seconds;
//   - restarts count from when the gate starts (the first list), so a pod
//     that crashed last week does not fail today's upgrade; a pod that
//     appears later counts all its restarts, which all happened while the
//     gate waited;
//   - a selector that matches nothing on the first list fails ("no pods
//     match …"): far more often a typo than pods to come.
//
// Some pods will never be Running and are left out instead of waited for:
// terminating pods and finished (Succeeded) pods, and Failed pods that a
// controller replaces (evicted pods, pods of a shut-down node); their
// replacements are judged instead. A Failed pod with no controller fails
// the gate: nothing will bring it back.
package podsrunning
