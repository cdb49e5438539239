// Package chunks keeps a blob in the cluster as content-addressed,
// immutable Secrets of under 1 MiB each: gzip-compressed, cut into
// chunks, every chunk and the whole checksummed (SHA-256), read back and
// verified after writing. A Secret because blobs (a plan's sources, a
// backup) may hold Secret manifests.
//
// A chunk's name carries the blob's digest, so writing the same content
// twice (a run resumed after a crash mid-write) finds its chunks already
// there and verifies them instead of writing again; and a chunk is
// immutable, so a blob never changes once its ref is recorded.
package chunks
