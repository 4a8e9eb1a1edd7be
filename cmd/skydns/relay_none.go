//go:build noembed

package main

import (
	"fmt"
	"io"
)

// runRelay is `skydns relay` in a skydns built without etcd's server
// (-tags noembed), which the relay is made of.
func runRelay(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "skydns relay: this skydns is built without etcd's server (-tags noembed); build it without the tag")
	return 2
}
