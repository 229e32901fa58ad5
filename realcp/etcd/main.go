// Command etcd is the upstream etcd 3.5 server (go.etcd.io/etcd/server/v3/etcdmain) built from the
// Go module proxy; the upstream binary's main package lives in a module that cannot be required.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
