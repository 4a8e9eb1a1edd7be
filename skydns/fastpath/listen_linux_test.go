package fastpath

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestUDPSocketsAskForALargeReceiveBuffer(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skipf("cannot read net.core.rmem_max: %v", err)
	}
	rmemMax, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	conns, err := ListenUDP("127.0.0.1:0", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(conns)
	for _, c := range conns {
		sc, err := c.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var size int
		sc.Control(func(fd uintptr) { size, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) })
		if err != nil {
			t.Fatal(err)
		}
		if want := min(ReceiveBuffer, rmemMax); size < want {
			t.Errorf("SO_RCVBUF %d, want at least %d (ReceiveBuffer %d, rmem_max %d)", size, want, ReceiveBuffer, rmemMax)
		}
	}
}
