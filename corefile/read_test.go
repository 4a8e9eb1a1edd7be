package corefile

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// readFile reads and translates a Corefile from testdata.
func readFile(t *testing.T, name string) *Plan {
	t.Helper()
	text, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Read(name, text, DefaultOptions())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// item finds the item of a line whose words start with prefix.
func item(t *testing.T, p *Plan, line int, prefix string) Item {
	t.Helper()
	for _, it := range p.Items {
		if it.Line == line && strings.HasPrefix(it.Words, prefix) {
			return it
		}
	}
	t.Fatalf("no item %q on line %d in %+v", prefix, line, p.Items)
	return Item{}
}

func TestPublishedCorefilesAreUsableAsTheyAre(t *testing.T) {
	cases := []struct {
		file     string
		skydns   []string
		kube2sky []string
	}{
		{"kubeadm.Corefile",
			[]string{"--zone=cluster.local.", "--pod-records=insecure", "--reverse-fallthrough=true", "--ttl=30", "--lameduck=5s",
				"--forward-max-concurrent=1000", "--cache-size=19968", "--max-ttl=30", "--cache-max-negative-ttl=30s", "--rotate=true"},
			[]string{"--zone=cluster.local", "--pod-records=insecure", "--ttl=30"}},
		{"eks.Corefile",
			[]string{"--zone=cluster.local.", "--pod-records=insecure", "--reverse-fallthrough=true", "--ttl=5", "--lameduck=5s",
				"--cache-size=19968", "--max-ttl=30", "--cache-max-negative-ttl=30s", "--rotate=true"},
			[]string{"--zone=cluster.local", "--pod-records=insecure", "--ttl=5"}},
		{"aks.Corefile",
			[]string{"--zone=cluster.local.", "--pod-records=insecure", "--reverse-fallthrough=true", "--ttl=30", "--lameduck=5s",
				"--cache-size=19968", "--max-ttl=30", "--cache-max-negative-ttl=30s", "--rotate=true"},
			[]string{"--zone=cluster.local", "--pod-records=insecure", "--ttl=30"}},
		{"nodelocaldns.Corefile",
			[]string{"--zone=cluster.local.", "--reverse-fallthrough=true", "--cache-size=19968", "--max-ttl=30",
				"--cache-max-negative-ttl=30s", "--rotate=false"},
			nil},
		{"stubdomain.Corefile",
			[]string{"--upstream=172.16.0.1,172.16.0.2:5353", "--stub-domain=consul.local=10.150.0.1",
				"--stub-domain=corp.example=10.0.0.53,[fd00::53]:5353", "--ttl=5", "--cache-size=19968", "--max-ttl=30"},
			[]string{"--zone=cluster.local", "--ttl=5"}},
		{"hosts.Corefile",
			[]string{"--zone=example.corp.", "--autopath=true", "--pod-records=verified",
				"--upstream=tls://9.9.9.9#dns.quad9.net,tls://149.112.112.112#dns.quad9.net", "--forward-health-check=5s",
				"--cache-size=7500", "--max-ttl=600", "--cache-max-negative-ttl=10s", "--cache-prefetch=3",
				"--cache-prefetch-percent=20", "--serve-stale=2h0m0s", "--log-queries=denial,error", "--rotate=true"},
			[]string{"--hosts-domain=example.corp", "--pod-records=verified", "--ttl=30"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := readFile(t, c.file)
			if err := p.Err(); err != nil {
				t.Fatalf("refused: %v", err)
			}
			for daemon, want := range map[string][]string{"skydns": c.skydns, "kube2sky": c.kube2sky} {
				got := p.Flags(daemon)
				for _, f := range want {
					if !slices.Contains(got, f) {
						t.Errorf("%s flags %q lack %s", daemon, got, f)
					}
				}
			}
		})
	}
}

func TestTheKubeadmCorefileLineByLine(t *testing.T) {
	p := readFile(t, "kubeadm.Corefile")
	want := []struct {
		line    int
		words   string
		verdict Verdict
	}{
		{1, ".:53", Used}, {2, "errors", Ignored}, {3, "health", Used}, {4, "lameduck 5s", Used},
		{6, "ready", Ignored}, {7, "kubernetes cluster.local in-addr.arpa ip6.arpa", Used},
		{8, "pods insecure", Used}, {9, "fallthrough in-addr.arpa ip6.arpa", Used}, {10, "ttl 30", Used},
		{12, "prometheus :9153", Ignored}, {13, "forward . /etc/resolv.conf", Used}, {14, "max_concurrent 1000", Used},
		{16, "cache 30", Used}, {17, "disable success cluster.local", Ignored}, {18, "disable denial cluster.local", Ignored},
		{20, "loop", Ignored}, {21, "reload", Ignored}, {22, "loadbalance", Used},
	}
	if len(p.Items) != len(want) {
		t.Errorf("%d items, want %d: %+v", len(p.Items), len(want), p.Items)
	}
	for _, w := range want {
		if it := item(t, p, w.line, w.words); it.Verdict != w.verdict || it.Words != w.words || it.Text == "" {
			t.Errorf("line %d: %+v, want %s %q with a reason", w.line, it, w.verdict, w.words)
		}
	}
}

func TestTheHostsEntriesBecomeHostsFileText(t *testing.T) {
	p := readFile(t, "hosts.Corefile")
	want := "10.0.0.5 db1.example.corp db1-primary.example.corp\nfd00::7 hdfs-nn1.example.corp\n"
	if p.Hosts != want {
		t.Fatalf("hosts text %q, want %q", p.Hosts, want)
	}
	if it := item(t, p, 6, "ttl 60"); it.Verdict != Ignored {
		t.Errorf("hosts ttl: %+v, want ignored (kube2sky's --ttl)", it)
	}
}

func TestRefusedCorefilesNameTheLine(t *testing.T) {
	cases := []struct {
		name, corefile, want string
	}{
		{"an unknown plugin", ".:53 {\n  forward . 8.8.8.8\n  frobnicate on\n}\n",
			`Corefile:3: frobnicate on: refused: unknown plugin "frobnicate"`},
		{"a CoreDNS plugin kubesky lacks", ".:53 {\n  whoami\n  forward . 8.8.8.8\n}\n",
			"Corefile:2: whoami: refused: kubesky has no equivalent of CoreDNS's whoami plugin"},
		{"a rewrite rule that is not a name rule", ".:53 {\n  rewrite type A AAAA\n  forward . 8.8.8.8\n}\n",
			`Corefile:2: rewrite type A AAAA: refused: rewrite "type A AAAA": only name rules are supported`},
		{"a template option skydns lacks", ".:53 {\n  template ANY ANY invalid {\n    rcode NXDOMAIN\n    ederror 21 blocked\n  }\n}\n",
			"Corefile:4: ederror 21 blocked: refused: skydns's templates take match, answer, additional, authority, rcode and fallthrough, one record per line"},
		{"a template whose regular expression does not compile", ".:53 {\n  template IN A example.org {\n    match (x\n  }\n}\n",
			"Corefile:2: template IN A example.org: refused: template"},
		{"a rewrite rule outside the root's block", "example.org:53 {\n  rewrite name a.example.org b.example.org\n  forward . 8.8.8.8\n}\n",
			"Corefile:2: rewrite name a.example.org b.example.org: refused: skydns applies rewrite rules to every question: put them in the server block for ."},
		{"a bad option", ".:53 {\n  kubernetes cluster.local {\n    pods sometimes\n  }\n}\n",
			"Corefile:3: pods sometimes: refused: pods takes disabled, insecure or verified"},
		{"an option kubesky lacks", ".:53 {\n  forward . 8.8.8.8 {\n    max_fails 3\n  }\n}\n",
			"Corefile:3: max_fails 3: refused: skydns marks an upstream down at its first failure"},
		{"except in a stub domain's forward", "corp.example {\n  forward . 10.0.0.53 {\n    except a.corp.example\n  }\n}\n",
			"Corefile:3: except a.corp.example: refused: skydns excepts names from its default upstreams only"},
		{"a name as upstream", ".:53 {\n  forward . dns.example.org\n}\n",
			"Corefile:2: forward . dns.example.org: refused: dns.example.org: not an upstream skydns takes: --upstream \"dns.example.org\": not an IP address"},
		{"a second cluster domain", ".:53 {\n  kubernetes cluster.local other.local\n}\n",
			"Corefile:2: kubernetes cluster.local other.local: refused: kube2sky writes one cluster domain, cluster.local., not also other.local."},
		{"two cache TTLs", ".:53 {\n  forward . 8.8.8.8\n  cache 30\n}\nexample.org {\n  forward . 10.0.0.1\n  cache 60\n}\n",
			"Corefile:7: cache 60: refused: skydns --max-ttl=60 conflicts with line 3, which sets it to 30"},
		{"another port", ".:5353 {\n  forward . 8.8.8.8\n}\n",
			"Corefile:1: .:5353: refused: .:5353: port 5353"},
		{"autopath without verified pods", ".:53 {\n  kubernetes cluster.local {\n    pods insecure\n  }\n  autopath @kubernetes\n}\n",
			"Corefile:5: autopath @kubernetes: refused: skydns's autopath needs the kubernetes plugin's `pods verified`, not insecure"},
		{"hosts without fallthrough in the root zone", ".:53 {\n  hosts {\n    10.0.0.1 a.example.org\n  }\n}\n",
			"Corefile:2: hosts: refused: without fallthrough"},
		{"hosts of /etc/hosts without fallthrough in the root zone", ".:53 {\n  hosts\n  forward . 8.8.8.8\n}\n",
			"Corefile:2: hosts: refused: without fallthrough"},
		{"a wildcard host", "example.org {\n  hosts {\n    10.0.0.1 *.example.org\n  }\n}\n",
			"Corefile:3: 10.0.0.1 *.example.org: refused: kube2sky serves no wildcard host names"},
		{"a fallthrough for part of the cluster domain", ".:53 {\n  kubernetes cluster.local {\n    fallthrough svc.cluster.local\n  }\n}\n",
			"Corefile:3: fallthrough svc.cluster.local: refused: skydns passes on the names of the whole cluster domain or none, not those of svc.cluster.local"},
		{"a stray brace read as a server block", ".:53 {\n  errors\n  }\n}\n",
			"Corefile:4: }: refused: }: not a domain name"},
		{"DNS over HTTPS", ".:53 {\n  forward . https://9.9.9.9\n}\n",
			"Corefile:2: forward . https://9.9.9.9: refused: https://9.9.9.9: skydns forwards over plain DNS and DNS over TLS only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Read("Corefile", []byte(c.corefile), DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			err = p.Err()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Err() = %v, want one line starting %q", err, c.want)
			}
		})
	}
}

func TestTheErrorCountsTheOtherRefusedLines(t *testing.T) {
	p, err := Read("Corefile", []byte(".:53 {\n  rewrite a b\n  template IN\n  whoami\n}\n"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Err().Error(); !strings.HasSuffix(got, "(and 2 more refused lines)") || !strings.HasPrefix(got, "Corefile:2: rewrite a b") {
		t.Fatalf("Err() = %q", got)
	}
}

func TestWhatIsNotACorefileIsAnErrorWithItsLine(t *testing.T) {
	cases := []struct{ name, corefile, want string }{
		{"an unclosed block", ".:53 {\n  forward . 8.8.8.8 {\n    max_concurrent 10\n", "Corefile:3 - Error during parsing: Unexpected EOF"},
		{"a brace too many", ".:53 {\n  forward . 8.8.8.8 }\n}\n", "Corefile:2 - Error during parsing: Unexpected '}' because no matching opening brace"},
		{"nothing", "# only a comment\n", "Corefile: not a Corefile: no server block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Read("Corefile", []byte(c.corefile), DefaultOptions())
			if err == nil || p != nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Read = %v, %v; want no plan and an error with %q", p, err, c.want)
			}
		})
	}
}

func TestCoreDNSDefaultsAreSetWhereTheCorefileIsSilent(t *testing.T) {
	p, err := Read("Corefile", []byte(".:53 {\n  kubernetes cluster.local\n}\n"), DefaultOptions())
	if err != nil || p.Err() != nil {
		t.Fatal(err, p.Err())
	}
	want := []string{"--zone=cluster.local.", "--priority=0", "--rotate=false", "--cache-size=0", "--allow-recursion=", "--ttl=5", "--reverse-fallthrough=false"}
	if got := p.Flags("skydns"); !slices.Equal(got, want) {
		t.Fatalf("skydns flags %q, want %q", got, want)
	}
	for _, s := range p.Settings {
		if s.Flag != "zone" && s.Flag != "priority" && s.Line != 0 { // the kubernetes line's
			t.Errorf("%s: line %d, want 0 (CoreDNS's default)", s.Arg(), s.Line)
		}
	}
}

func TestTheClusterZoneOptionServesNodeLocalDNSCachesOwnDomain(t *testing.T) {
	corefile := []byte("k8s.example:53 {\n  forward . 10.96.0.11 {\n    force_tcp\n  }\n}\n.:53 {\n  forward . /etc/resolv.conf\n}\n")
	p, err := Read("Corefile", corefile, Options{ClusterZone: "k8s.example"})
	if err != nil || p.Err() != nil {
		t.Fatal(err, p.Err())
	}
	if !slices.Contains(p.Flags("skydns"), "--zone=k8s.example.") {
		t.Fatalf("flags %q lack --zone=k8s.example.", p.Flags("skydns"))
	}
	p, _ = Read("Corefile", corefile, DefaultOptions())
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "force_tcp") {
		t.Fatalf("with cluster.local the k8s.example block is a stub domain and force_tcp is refused; Err() = %v", err)
	}
}

func TestEveryLineOfARefusedServerBlockIsStillReported(t *testing.T) {
	p, err := Read("Corefile", []byte("tls://.:853 {\n  forward . 8.8.8.8 {\n    max_concurrent 10\n  }\n}\n"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[int]Verdict{1: Refused, 2: Ignored, 3: Ignored} {
		if it := p.Items[line-1]; it.Line != line || it.Verdict != want {
			t.Errorf("line %d: %+v, want %s", line, it, want)
		}
	}
	if len(p.Settings) != 2 { // --rotate=false and --cache-size=0, CoreDNS's defaults
		t.Errorf("settings %+v from a refused block", p.Settings)
	}
}

func TestAForwardOfASubzoneInTheRootBlockIsAStubDomain(t *testing.T) {
	p, err := Read("Corefile", []byte(".:53 {\n  kubernetes cluster.local\n  forward lab.example.local 10.20.0.1\n  forward . 8.8.8.8\n}\n"), DefaultOptions())
	if err != nil || p.Err() != nil {
		t.Fatal(err, p.Err())
	}
	flags := p.Flags("skydns")
	if !slices.Contains(flags, "--stub-domain=lab.example.local=10.20.0.1") || !slices.Contains(flags, "--upstream=8.8.8.8") {
		t.Fatalf("flags %q", flags)
	}
}

// A hosts file is a key of CoreDNS's ConfigMap, mounted at /etc/coredns:
// its entries are served as inline ones are, or refused with the reason.
func TestAHostsFileIsReadFromItsConfigMapKey(t *testing.T) {
	keys := KeysOf(map[string]string{
		"customhosts": "# databases\n10.0.0.1 db.corp.example\n\n10.0.0.2 cache.corp.example # second\n",
		"NodeHosts":   "10.0.0.5 node1\n", // k3s's: bare node names, under no one domain
		"badhosts":    "10.0.0.300 x.corp.example\n",
	})
	read := func(t *testing.T, hosts string) *Plan {
		t.Helper()
		opts := DefaultOptions()
		opts.ReadKey = keys
		p, err := Read("Corefile", []byte(".:53 {\n  hosts "+hosts+" {\n    ttl 60\n    reload 15s\n    fallthrough\n  }\n  forward . /etc/resolv.conf\n}\n"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := read(t, "/etc/coredns/customhosts corp.example")
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "10.0.0.1 db.corp.example\n10.0.0.2 cache.corp.example\n"; p.Hosts != want {
		t.Errorf("Hosts = %q, want %q", p.Hosts, want)
	}
	if flags := p.Flags("kube2sky"); !slices.Contains(flags, "--hosts-domain=corp.example") {
		t.Errorf("kube2sky flags %q, want --hosts-domain=corp.example", flags)
	}
	for _, c := range []struct{ hosts, want string }{
		{"/etc/coredns/NodeHosts", "Corefile:2: hosts /etc/coredns/NodeHosts: refused: kube2sky serves host entries under one domain: name node1 in full"},
		{"/etc/coredns/missing", "Corefile:2: hosts /etc/coredns/missing: refused: the ConfigMap's key missing (/etc/coredns/missing): no such key"},
		{"/etc/coredns/badhosts", `Corefile:2: hosts /etc/coredns/badhosts: refused: badhosts: "10.0.0.300" is not an address`},
		{"/var/lib/hosts", "Corefile:2: hosts /var/lib/hosts: refused: kube2sky serves host files that are keys of CoreDNS's ConfigMap (mounted at /etc/coredns/), not /var/lib/hosts"},
	} {
		p := read(t, c.hosts)
		if err := p.Err(); err == nil || err.Error() != c.want {
			t.Errorf("hosts %s: Err() = %v, want %q", c.hosts, err, c.want)
		}
		if it := item(t, p, 5, "fallthrough"); it.Verdict != Used {
			t.Errorf("hosts %s: the block's lines are still reported: %+v", c.hosts, it)
		}
	}
}

func TestTheFlagsPrintedForARewriteAreOneShellWordEach(t *testing.T) {
	p, err := ReadUsable("Corefile", []byte(".:53 {\n  rewrite name regex (.*)-(it's)\\.a\\.example {1}.{2}.b.example\n  forward . 8.8.8.8\n}\n"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := `--rewrite=name regex (.*)-(it's)\.a\.example {1}.{2}.b.example`
	args := p.Flags("skydns")
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+args[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSuffix(string(out), "\n"); got != want {
		t.Fatalf("the shell reads %s as %q, want %q", args[0], got, want)
	}
}

// namespaces limits kube2sky's Services and, with pod names, skydns's pods.
func TestNamespacesLimitServicesAndPods(t *testing.T) {
	for _, c := range []struct {
		block string
		want  Verdict
	}{
		{"kubernetes cluster.local {\n    namespaces default team-a\n  }", Used},
		{"kubernetes cluster.local {\n    namespaces default\n    pods disabled\n  }", Used},
		{"kubernetes cluster.local {\n    namespaces default\n    pods insecure\n  }", Used},
		{"kubernetes cluster.local {\n    pods verified\n    namespaces default\n  }", Used},
		{"kubernetes cluster.local {\n    namespaces\n  }", Refused},
	} {
		p, err := Read("Corefile", []byte(".:53 {\n  "+c.block+"\n}\n"), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, it := range p.Items {
			if strings.HasPrefix(it.Words, "namespaces") {
				found++
				if it.Verdict != c.want {
					t.Errorf("%q: %s %s (%s), want %s", c.block, it.Words, it.Verdict, it.Text, c.want)
				}
			}
		}
		if found != 1 {
			t.Errorf("%q: %d namespaces items, want 1", c.block, found)
		}
		if c.want == Used && !slices.Contains(p.Flags("kube2sky"), "--namespaces=default,team-a") && !slices.Contains(p.Flags("kube2sky"), "--namespaces=default") {
			t.Errorf("%q: kube2sky flags %q lack --namespaces", c.block, p.Flags("kube2sky"))
		}
		if pods := strings.Contains(c.block, "pods insecure") || strings.Contains(c.block, "pods verified"); c.want == Used && pods != slices.Contains(p.Flags("skydns"), "--pod-namespaces=default") {
			t.Errorf("%q: skydns flags %q: --pod-namespaces=default only with pod names", c.block, p.Flags("skydns"))
		}
	}
}

// dnstap becomes skydns's --dnstap: a path or unix:// is a Unix socket,
// tcp:// a TCP reader; identity is kept; tls:// and other options are
// refused.
func TestDnstapBecomesSkydnssFlag(t *testing.T) {
	for _, c := range []struct{ lines, want string }{
		{"dnstap /var/run/tap.sock full", "--dnstap=unix:/var/run/tap.sock"},
		{"dnstap unix:///var/run/tap.sock", "--dnstap=unix:/var/run/tap.sock"},
		{"dnstap tcp://127.0.0.1:6000 full {\n    identity node-1\n  }", "--dnstap-identity=node-1"},
		{"dnstap tls://127.0.0.1:6000", ""},
		{"dnstap /s {\n    skipverify\n  }", ""},
	} {
		p, err := Read("Corefile", []byte(".:53 {\n  "+c.lines+"\n}\n"), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			if p.Err() == nil {
				t.Errorf("%q: usable, want refused", c.lines)
			}
			continue
		}
		if p.Err() != nil || !slices.Contains(p.Flags("skydns"), c.want) {
			t.Errorf("%q: flags %q (%v), want %s", c.lines, p.Flags("skydns"), p.Err(), c.want)
		}
	}
}

// dnssec with key files becomes skydns's --dnssec-key, one per key, named
// with .key; zones skydns does not answer, and keys not in files, are
// refused.
func TestDnssecBecomesSkydnssKeys(t *testing.T) {
	p, err := Read("Corefile", []byte("cluster.local:53 {\n  kubernetes\n  dnssec {\n    key file /k/Kcluster.local.+013+1 /k/Kcluster.local.+013+2.key\n    cache_capacity 10000\n  }\n}\n"), DefaultOptions())
	if err != nil || p.Err() != nil {
		t.Fatal(err, p.Err())
	}
	for _, want := range []string{"--dnssec-key=/k/Kcluster.local.+013+1.key", "--dnssec-key=/k/Kcluster.local.+013+2.key"} {
		if !slices.Contains(p.Flags("skydns"), want) {
			t.Errorf("flags %q lack %s", p.Flags("skydns"), want)
		}
	}
	for _, refused := range []string{"dnssec example.org {\n    key file /k/K\n  }", "dnssec {\n    key aws_secretsmanager x\n  }", "dnssec"} {
		p, err := Read("Corefile", []byte(".:53 {\n  "+refused+"\n}\n"), DefaultOptions())
		if err != nil || p.Err() == nil {
			t.Errorf("%q: %v, want refused", refused, err)
		}
	}
}

// kubernetes fallthrough passes on the names no record answers, of the
// zones it names (all of them when none), as skydns flags.
func TestKubernetesFallthroughZones(t *testing.T) {
	for _, c := range []struct {
		option string
		want   []string
	}{
		{"fallthrough", []string{"--reverse-fallthrough=true", "--zone-fallthrough=cluster.local."}},
		{"fallthrough cluster.local", []string{"--reverse-fallthrough=false", "--zone-fallthrough=cluster.local."}},
		{"fallthrough in-addr.arpa ip6.arpa", []string{"--reverse-fallthrough=true"}},
	} {
		p, err := ReadUsable("Corefile", []byte(".:53 {\n  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    "+c.option+"\n  }\n  forward . 8.8.8.8\n}\n"), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range p.Flags("skydns") {
			if strings.Contains(f, "fallthrough") {
				got = append(got, f)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: skydns flags %q, want %q", c.option, got, c.want)
		}
	}
}
