package corefile

// The plugins that become skydns flags of its own features: dnstap and
// dnssec.

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

// dnssec is the dnssec plugin with key files: skydns signs the zones of
// the keys (their names, not the plugin's ZONES, which must be its own)
// online, and checks at start that each key is ECDSA P-256 of a served
// zone. A CoreDNS key is named without its .key suffix.
func (t *translator) dnssec(s server, u use) {
	for _, z := range u.args {
		if zone, why := normalZone(z); why != "" || !t.isOwn(zone) {
			t.refuse(u.at(), "skydns signs only the zones it answers itself, not "+z)
			return
		}
	}
	var keys []string
	for _, o := range u.options {
		if o.name == "cache_capacity" {
			t.ignore(o.at("dnssec"), "skydns keeps the signatures of each snapshot's answers")
			continue
		}
		if o.name != "key" || len(o.args) < 2 || o.args[0] != "file" {
			t.unknownOption("dnssec", o)
			return
		}
		for _, k := range o.args[1:] {
			keys = append(keys, strings.TrimSuffix(k, ".key")+".key")
		}
	}
	if len(keys) == 0 {
		t.refuse(u.at(), "skydns signs with key files only: dnssec needs key file K...")
		return
	}
	flags := make([]flag, len(keys))
	for i, k := range keys {
		flags[i] = sky("dnssec-key", k)
	}
	t.use(u.at(), "answers to DO queries are signed online with these keys (ECDSA P-256, checked at start)", flags...)
}
