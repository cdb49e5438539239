// Package preview computes what a step would change without changing it:
// each object's live state against the server's dry run of the change,
// both normalized (no server bookkeeping), compared, then shown as a
// unified diff with Secret values redacted as a pair (a changed value is
// marked changed, never shown). The step kinds call it from their Preview
// methods; `upshift plan` prints the result.
package preview
