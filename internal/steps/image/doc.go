// Package image is the `image` step: set container images on one
// Deployment, DaemonSet or StatefulSet, wait for the rollout, and check
// that every running pod runs the new images.
//
// Only the images change. The step server-side applies a patch that names
// just the containers (by name, which is how apply merges container lists)
// and their image, as its own field manager "upshift-image". Every other
// field stays with whoever owns it, so env vars, including ones another
// manager added with valueFrom, survive. The patch also repeats, unchanged,
// the images this manager set on other containers in earlier steps: an
// apply that left them out would remove them.
package image
