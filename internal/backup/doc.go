// Package backup snapshots the objects a stage touches before it changes
// anything, keeps the snapshot in the cluster, and puts those objects back
// on rollback.
//
// The story of one stage:
//
//  1. [Client.Take] GETs every object the stage's steps name. An object
//     that does not exist (or whose kind is not served yet) is recorded as
//     absent: the stage may create it, and rollback deletes it again.
//  2. [Client.Save] writes the snapshot as gzip-compressed JSON into
//     Secrets of type upshift.dev/backup, each under 1 MiB, named from the
//     run, stage and attempt, with a SHA-256 per chunk and one for the
//     whole. It reads every Secret back and checks the sums before the
//     stage may start: a backup that cannot be read is no backup.
//  3. [Client.Load] reads a [v1alpha1.BackupRef] back; a missing or altered
//     Secret is a [*CorruptError] (errors.Is ErrCorrupt) that names it.
//  4. [Client.Restore] replaces each object with its snapshot, deletes what
//     the stage created (except CustomResourceDefinitions: deleting one
//     deletes its data, so it is kept and reported), then verifies: every
//     restored object must equal its snapshot ([Compare], modulo what the
//     API server and controllers maintain) and every workload must become
//     Current again. What does not hold is a difference in the returned
//     [v1alpha1.Rollback]; a field another manager took over since the
//     restore (managedFields; see [Compare]) is listed as not compared
//     instead. An error means IO that could not be done.
//
// Secret values never leave this package in messages: [Compare] shows them
// through redact.Object, by their size.
package backup
