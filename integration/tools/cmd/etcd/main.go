// Command etcd is the upstream etcd server, built from the
// go.etcd.io/etcd/server/v3 module pinned in this module's go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
