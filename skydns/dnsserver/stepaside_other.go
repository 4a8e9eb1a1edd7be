//go:build !linux

package dnsserver

import (
	"errors"
	"net"
)

// udpSockets cannot step aside off Linux: connect fails, and the server
// serves on.
type udpSockets []*net.UDPConn

var errNoStepAside = errors.New("stepping aside needs Linux")

func (udpSockets) connect() error        { return errNoStepAside }
func (udpSockets) disconnect() error     { return nil }
func (udpSockets) queued() (bool, error) { return false, nil }
