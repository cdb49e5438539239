// Package auth is the HTTP API's login: passwords read from files or a
// Secret (never from a flag value, which ps and shell history show),
// compared in constant time, and signed expiring tokens (JWT, HS256)
// carrying a role. The signing key lives in the server's state directory,
// so a restarted server honours the tokens it issued.
//
// Two roles: admin may do everything; viewer may read (status, runs,
// check, preview) and gets 403 on every action.
package auth
