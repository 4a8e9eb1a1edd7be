// Package soakcheck judges what a soak run (integration's TestSoak)
// recorded, with no I/O: the updates each skydns applied against etcd's
// own history of the prefix (the watch guarantees), the answers served
// against the changes the API server acknowledged (bounded staleness),
// and the records in etcd against the records the API objects make
// (convergence).
package soakcheck
