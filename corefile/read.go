package corefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coredns/caddy/caddyfile"

	"github.com/kubesky/kubesky/contract"
)

// Options are what a Corefile does not say but its translation needs.
type Options struct {
	// ClusterZone is the cluster domain when no kubernetes plugin names
	// one, as in NodeLocal DNSCache's Corefile ("cluster.local.").
	ClusterZone string
	// HostsConfigMap is the "namespace/name" of the ConfigMap that is to
	// hold the hosts plugins' inline entries (Plan.Hosts), for kube2sky's
	// --hosts-configmap.
	HostsConfigMap string
	// ReadKey, if set, returns another key of the ConfigMap the Corefile
	// is read from: a hosts plugin's file under /etc/coredns/.
	ReadKey func(key string) (string, error)
}

// KeysIn returns an Options.ReadKey that reads a key as the file of that
// name in dir, where the ConfigMap is mounted.
func KeysIn(dir string) func(string) (string, error) {
	return func(key string) (string, error) {
		text, err := os.ReadFile(filepath.Join(dir, key))
		return string(text), err
	}
}

// KeysOf returns an Options.ReadKey that reads the keys of data.
func KeysOf(data map[string]string) func(string) (string, error) {
	return func(key string) (string, error) {
		text, ok := data[key]
		if !ok {
			return "", errors.New("no such key")
		}
		return text, nil
	}
}

// DefaultOptions returns the options kubesky's daemons default to.
func DefaultOptions() Options {
	return Options{ClusterZone: "cluster.local.", HostsConfigMap: "kube-system/kubesky-hosts"}
}

// Read parses a Corefile with CoreDNS's own grammar and translates it. The
// error is for a Corefile that does not parse (it names the line); a
// Corefile that parses always gives a Plan, whose Err says whether kubesky
// can use it. file names the Corefile in messages and is where relative
// imports are read from.
func Read(file string, text []byte, opts Options) (*Plan, error) {
	blocks, err := caddyfile.Parse(file, bytes.NewReader(text), nil)
	if err != nil {
		return nil, fmt.Errorf("not a Corefile: %w", err)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: not a Corefile: no server block", file)
	}
	t := &translator{plan: &Plan{File: file}, seen: map[string]bool{}, hostsConfigMap: opts.HostsConfigMap, readKey: opts.ReadKey}
	t.cluster = clusterZone(blocks, opts)
	lines := blockLines(file, text)
	for i, b := range blocks {
		line := 0
		if len(lines) == len(blocks) {
			line = lines[i]
		}
		t.block(file, b, line)
	}
	t.coreDNSDefaults()
	t.plan.sortItems()
	return t.plan, nil
}

// ReadUsable is Read for a Corefile that is to be applied: it returns the
// plan only when kubesky can use it as it is, else the error that says
// why (the parser's, or Plan.Err's).
func ReadUsable(file string, text []byte, opts Options) (*Plan, error) {
	plan, err := Read(file, text, opts)
	if err != nil {
		return nil, err
	}
	if err := plan.Err(); err != nil {
		return nil, err
	}
	return plan, nil
}

// server is one server block: its zones and the line they are on.
type server struct {
	zones []string // fully qualified, lower case; "." for the root
	line  int
}

func (t *translator) block(file string, b caddyfile.ServerBlock, line int) {
	s := server{line: line}
	a := at{line: line, words: strings.Join(b.Keys, " ")}
	var bad []string
	for _, key := range b.Keys {
		zone, why := t.serverKey(key)
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s: %s", key, why))
			continue
		}
		s.zones = append(s.zones, zone)
	}
	if len(bad) > 0 {
		t.refuse(a, strings.Join(bad, "; "))
	} else {
		t.use(a, "zones "+strings.Join(s.zones, " ")+" answered on skydns's --dns-addr")
	}
	for _, name := range directiveOrder(b.Tokens) {
		t.seen[name] = true
		for _, u := range uses(file, b.Tokens[name]) {
			t.directive(s, u)
		}
	}
}

// serverKey reads a server block key: [dns://]zone[:port]. It returns the
// zone, or why kubesky cannot serve it.
func (t *translator) serverKey(key string) (string, string) {
	rest := key
	if scheme, after, ok := strings.Cut(key, "://"); ok {
		if scheme != "dns" {
			return "", fmt.Sprintf("%s:// servers are not served from a Corefile (skydns has --tls-addr for DNS over TLS)", scheme)
		}
		rest = after
	}
	zone, port, _ := strings.Cut(rest, ":")
	if port != "" && port != "53" {
		return "", fmt.Sprintf("port %s: kubesky answers every zone on one address, skydns's --dns-addr (port 53 in a cluster)", port)
	}
	return normalZone(zone)
}

// normalZone returns a zone fully qualified and in lower case, or why it
// is not a zone kubesky can take.
func normalZone(zone string) (string, string) {
	z := strings.ToLower(strings.TrimSuffix(zone, "."))
	switch {
	case z == "":
		return ".", ""
	case strings.Contains(z, "/"):
		return "", "reverse zones in CIDR form are not supported; name the in-addr.arpa or ip6.arpa zone"
	case !contract.ValidDomain(z):
		return "", "not a domain name"
	}
	return z + ".", ""
}

// directiveOrder returns a block's directives in the order they appear.
func directiveOrder(tokens map[string][]caddyfile.Token) []string {
	names := make([]string, 0, len(tokens))
	for name := range tokens {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return tokens[a][0].Line - tokens[b][0].Line })
	return names
}

// use is one occurrence of a directive: its words and its block's lines.
type use struct {
	line    int
	name    string
	args    []string
	options []option
}

// option is one line inside a directive's block.
type option struct {
	line int
	name string
	args []string
}

func (u use) at() at {
	return at{line: u.line, dir: u.name, words: words(append([]string{u.name}, u.args...)...)}
}

func (o option) at(dir string) at {
	return at{line: o.line, dir: dir, words: words(append([]string{o.name}, o.args...)...)}
}

// uses splits a directive's tokens into its occurrences.
func uses(file string, tokens []caddyfile.Token) []use {
	d := caddyfile.NewDispenserTokens(file, tokens)
	var out []use
	for d.Next() {
		u := use{line: d.Line(), name: d.Val(), args: d.RemainingArgs()}
		for d.NextBlock() {
			u.options = append(u.options, option{line: d.Line(), name: d.Val(), args: d.RemainingArgs()})
		}
		out = append(out, u)
	}
	return out
}

// blockLines returns the line of each server block's first key, from the
// same lexer the parser uses: the words at brace depth 0 that start a
// line, snippets ("(name)") left out.
func blockLines(file string, text []byte) []int {
	d := caddyfile.NewDispenser(file, bytes.NewReader(text))
	var lines []int
	depth, last := 0, 0
	for d.Next() {
		switch v := d.Val(); {
		case v == "{":
			depth++
		case v == "}" && depth > 0:
			depth--
		case depth == 0 && d.Line() != last && !strings.HasPrefix(v, "("):
			lines = append(lines, d.Line())
		}
		last = d.Line()
	}
	return lines
}
