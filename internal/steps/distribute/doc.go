// Package distribute is the distribute step kind: a release's artifacts
// put on every node's disk before the nodes are upgraded, the way
// embedded-cluster's artifact Jobs do it.
//
// Each node gets one Job, copy-artifacts-<node>, in embedded-cluster's
// shape: pinned to the node by nodeName, the node's data directory
// mounted read-write, backoffLimit 2, annotated with the Installation's
// name and the artifacts' config hash, and reading what it must not see
// in the plan (a license ID) from a Secret the step creates before the
// Jobs and deletes after them.
//
// Run moves the step on by one look and returns Running until every
// node's Job has succeeded (no goroutine waits out the copy). It lists
// the nodes each time, so a node that joins during the step gets its Job.
// A Job that fails fails the step, naming the node and the last lines its
// container logged. On success the Jobs and the Secret are deleted; on a
// rollback the Reverter deletes every Job of the step (those of nodes
// that joined after the backup too) and the Secret.
//
// Jobs carry the run, attempt and step that made them: a resumed driver
// takes its own Jobs on, and a new attempt replaces an earlier one's.
//
// On the local cluster the nodes are fake (kwok): the Jobs' pods run
// nowhere and succeed or fail as its rules say, so tests prove the Jobs'
// shape, placement, waiting, failure and clean-up, not a copy.
package distribute
