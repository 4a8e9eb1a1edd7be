//go:build !linux

package nodelocal

import (
	"errors"
)

// Setup fails: node-local mode needs Linux.
func Setup(Config) error { return errors.New("node-local mode needs Linux") }
