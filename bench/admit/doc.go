// Package admit decides who gets into rdmabench's server before any
// session state exists: the table of unauthenticated connections with its
// per-source and global caps (table.go: Table), the --allow list
// (allow.go: ParseAllow, Allowed), refusals that reach a peer whose hello
// is unread, and a log that a flood cannot flood (refuse.go: Refuse,
// LogLimiter). It allocates nothing for a
// peer but its table entry; the server (package bench) owns the listener
// and the sessions.
package admit
