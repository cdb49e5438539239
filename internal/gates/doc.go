// Package gates builds the health check of a plan gate: New picks the
// kind's package (ready, http, podsrunning, pvcsbound, nodesready,
// envkept). A gate waits, within its timeout, until its condition holds
// (Succeeded) or cannot hold (Failed); a gate that does not pass is a
// Failed result, not an error. Severity is the engine's business, not the
// gate's.
package gates
