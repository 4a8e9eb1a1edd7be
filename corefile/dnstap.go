package corefile

import (
	"strings"
)

// dnstap is the dnstap plugin: SOCKET (a Unix socket path, unix:// or
// tcp://), full (skydns always sends the whole messages), and identity in
// its block.
func (t *translator) dnstap(_ server, u use) {
	if len(u.args) == 0 || len(u.args) > 2 || (len(u.args) == 2 && u.args[1] != "full") {
		t.refuse(u.at(), "dnstap takes SOCKET [full]")
		return
	}
	target, why := dnstapTarget(u.args[0])
	if why != "" {
		t.refuse(u.at(), why)
		return
	}
	t.use(u.at(), "every answer and forwarded query goes to the dnstap reader, messages whole", sky("dnstap", target))
	for _, o := range u.options {
		a := o.at("dnstap")
		if o.name != "identity" || len(o.args) != 1 {
			t.unknownOption("dnstap", o)
			continue
		}
		t.use(a, "the identity in the messages", sky("dnstap-identity", o.args[0]))
	}
}

// dnstapTarget is CoreDNS's dnstap SOCKET as skydns's --dnstap, or why not.
func dnstapTarget(socket string) (string, string) {
	switch {
	case strings.HasPrefix(socket, "tcp://"):
		return "tcp:" + strings.TrimPrefix(socket, "tcp://"), ""
	case strings.HasPrefix(socket, "unix://"):
		return "unix:" + strings.TrimPrefix(socket, "unix://"), ""
	case strings.HasPrefix(socket, "/"):
		return "unix:" + socket, ""
	}
	return "", "skydns sends dnstap to a Unix socket or over TCP, not to " + socket
}
