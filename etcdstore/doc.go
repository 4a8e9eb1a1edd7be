// Package etcdstore is the etcd I/O both daemons share: the etcd client
// options and flags, and a list-then-watch loop that mirrors a key prefix as
// contract.Updates. The keys and values themselves are package contract's.
package etcdstore
