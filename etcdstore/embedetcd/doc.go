// Package embedetcd runs a single-member etcd server inside the process:
// skydns's embedded mode (no --etcd-endpoints) and the tests' etcd. It is a
// package of its own so that only the programs that start one link etcd's
// server.
package embedetcd
