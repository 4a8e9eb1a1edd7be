// Command etcdctl is the upstream etcd command-line client, built from the
// go.etcd.io/etcd/etcdctl/v3 module pinned in this module's go.mod.
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() {
	ctlv3.MustStart()
}
