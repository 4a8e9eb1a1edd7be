package fastpath

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgs are the headers of one recvmmsg(2) or sendmmsg(2) batch, one slot
// per message, each with one buffer and room for a socket address of
// either family, reused from batch to batch. The calls are made raw
// (unix.RawSyscall6): the socket is non-blocking, so a call never waits,
// and outside the scheduler's system-call state the runtime does not hand
// the goroutine's P to another thread while the kernel copies a batch
// (see docs/fastpath.md, "CPU beyond the kernel's").
type mmsgs struct {
	trap  uintptr // unix.SYS_RECVMMSG or unix.SYS_SENDMMSG
	hdrs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6

	call  func(fd uintptr) bool // b.mmsg, made once: a closure per call would be garbage
	count int                   // slots offered to the call
	done  int                   // messages it moved
	errno syscall.Errno         // its error
}

// mmsghdr is struct mmsghdr of recvmmsg(2); Go pads it as C does.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

func newMmsgs(trap uintptr, slots int) *mmsgs {
	b := &mmsgs{trap: trap, hdrs: make([]mmsghdr, slots), iovs: make([]unix.Iovec, slots), names: make([]unix.RawSockaddrInet6, slots)}
	b.call = b.mmsg
	return b
}

// prepare points slot i's header at buf, at oob (if any) and, when
// namelen > 0, at the slot's address of that length.
func (b *mmsgs) prepare(i int, buf, oob []byte, namelen uint32) {
	b.iovs[i].Base = unsafe.SliceData(buf)
	b.iovs[i].SetLen(len(buf))
	h := &b.hdrs[i].hdr
	*h = unix.Msghdr{Iov: &b.iovs[i]}
	h.SetIovlen(1)
	if namelen > 0 {
		h.Name, h.Namelen = (*byte)(unsafe.Pointer(&b.names[i])), namelen
	}
	if len(oob) > 0 {
		h.Control = &oob[0]
		h.SetControllen(len(oob))
	}
}

// run makes the call for the first n slots through wait (the socket's
// syscall.RawConn Read or Write, which waits until the socket is ready
// and calls again) and returns how many messages moved.
func (b *mmsgs) run(n int, wait func(func(fd uintptr) bool) error) (int, error) {
	b.count = n
	if err := wait(b.call); err != nil {
		return 0, err
	}
	if b.errno != 0 {
		name := "recvmmsg"
		if b.trap == unix.SYS_SENDMMSG {
			name = "sendmmsg"
		}
		return 0, os.NewSyscallError(name, b.errno)
	}
	return b.done, nil
}

// mmsg makes one non-blocking call; false (nothing to read, or no room
// to write, yet) makes the runtime wait for the socket and call again.
func (b *mmsgs) mmsg(fd uintptr) bool {
	r, _, e := unix.RawSyscall6(b.trap, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(b.count), 0, 0, 0)
	if e == unix.EAGAIN {
		return false
	}
	b.done, b.errno = int(r), e
	return true
}
