package corefile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check runs `corefile check` with args and returns status and output;
// the cluster --kubeconfig reaches has kube-system/coredns holding the
// kubeadm Corefile.
func check(stdin string, args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	code := Check("kubesky", args, strings.NewReader(stdin), &stdout, &stderr, fakeCluster)
	return code, stdout.String(), stderr.String()
}

func fakeCluster(_ context.Context, kubeconfig, namespace, name, key string) (string, error) {
	if namespace+"/"+name+"/"+key != "kube-system/coredns/Corefile" {
		return "", fmt.Errorf("configmaps %q not found", name)
	}
	text, err := os.ReadFile("testdata/kubeadm.Corefile")
	return string(text), err
}

func TestCheckReadsTheLiveConfigMap(t *testing.T) {
	code, stdout, stderr := check("", "check", "--kubeconfig=/etc/kubeconfig")
	if code != 0 || !strings.Contains(stdout, "kube-system/coredns:14: used    max_concurrent 1000: ") {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = check("", "check", "--kubeconfig=/etc/kubeconfig", "--configmap=kube-system/dns")
	if code != 1 || stdout != "" || stderr != "kubesky: configmaps \"dns\" not found\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestCheckExits0ForAUsableCorefile(t *testing.T) {
	code, stdout, stderr := check("", "check", "testdata/kubeadm.Corefile")
	if code != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"testdata/kubeadm.Corefile:14: used    max_concurrent 1000: ",
		"testdata/kubeadm.Corefile:20: ignored loop: ",
		"skydns flags: --lameduck=5s --zone=cluster.local. ",
		"kube2sky flags: --zone=cluster.local --pod-records=insecure --ttl=30\n",
		"usable as is",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestCheckExits1ForARefusedCorefileAndSaysWhichLine(t *testing.T) {
	code, stdout, _ := check(".:53 {\n  forward . 8.8.8.8\n  whoami {\n    answer \"{{ .Name }} 60 IN A 10.0.0.1\"\n  }\n}\n", "check", "-")
	want := "-:3: refused whoami: kubesky has no equivalent of CoreDNS's whoami plugin\n"
	if code != 1 || !strings.Contains(stdout, want) || !strings.HasSuffix(stdout, "refused: -:3: whoami: refused: kubesky has no equivalent of CoreDNS's whoami plugin\n") {
		t.Fatalf("status %d, stdout:\n%s\nwant 1, the line %q and the verdict last", code, stdout, want)
	}
}

func TestCheckPrintsTheHostsConfigMapData(t *testing.T) {
	code, stdout, _ := check("", "check", "testdata/hosts.Corefile")
	if code != 0 || !strings.Contains(stdout, "hosts ConfigMap data (kube2sky --hosts-configmap):\n  10.0.0.5 db1.example.corp db1-primary.example.corp\n  fd00::7 hdfs-nn1.example.corp\n") {
		t.Fatalf("status %d, stdout:\n%s", code, stdout)
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(broken, []byte(".:53 {\n  forward . 8.8.8.8 {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", nil, 2, "kubesky: want corefile check FILE"},
		{"no file", []string{"check"}, 2, "kubesky: want corefile check FILE, or corefile check --kubeconfig=PATH"},
		{"a file and a kubeconfig", []string{"check", "a", "--kubeconfig=k"}, 2, "kubesky: want corefile check FILE"},
		{"two files", []string{"check", "a", "b"}, 2, "kubesky: want corefile check FILE"},
		{"a bad ConfigMap name", []string{"check", "--kubeconfig=k", "--configmap=coredns"}, 2, `kubesky: --configmap "coredns": want namespace/name`},
		{"an unknown flag", []string{"check", "x", "--zone=a"}, 2, "kubesky: unknown flag: --zone"},
		{"a missing file", []string{"check", filepath.Join(dir, "none")}, 1, "kubesky: open " + filepath.Join(dir, "none") + ": no such file or directory"},
		{"a syntax error", []string{"check", broken}, 1, "kubesky: not a Corefile: " + broken + ":2 - Error during parsing: Unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := check("", c.args...)
			if code != c.code || stdout != "" || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d and one line %q", code, stdout, stderr, c.code, c.want)
			}
		})
	}
}

func TestCheckHelpExits0(t *testing.T) {
	code, stdout, _ := check("", "--help")
	if code != 0 || !strings.Contains(stdout, "kubesky corefile check FILE") {
		t.Fatalf("status %d, stdout %q", code, stdout)
	}
}

// A local Corefile's hosts file under /etc/coredns is read as the file of
// that name beside it, as the ConfigMap's keys are mounted side by side.
func TestCheckReadsAHostsFileBesideTheCorefile(t *testing.T) {
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(corefile, []byte(".:53 {\n  hosts /etc/coredns/customhosts corp.example {\n    fallthrough\n  }\n  forward . 8.8.8.8\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "customhosts"), []byte("10.0.0.1 db.corp.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := check("", "check", corefile)
	if code != 0 || !strings.Contains(stdout, corefile+":2: used    10.0.0.1 db.corp.example: ") {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if err := os.Remove(filepath.Join(dir, "customhosts")); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = check("", "check", corefile)
	if code != 1 || !strings.Contains(stdout, "refused hosts /etc/coredns/customhosts corp.example: the ConfigMap's key customhosts (/etc/coredns/customhosts): open ") {
		t.Fatalf("without the file: status %d, stdout %q", code, stdout)
	}
}

// The parser's note on an import matching no file (AKS's Corefile imports
// custom/*.server) is one line of the command's own on stderr.
func TestCheckPrintsTheParsersNotesAsItsOwnLines(t *testing.T) {
	code, _, stderr := check("", "check", "testdata/aks.Corefile")
	if code != 0 || !strings.Contains(stderr, "kubesky: [WARNING] No files matching import glob pattern: custom/*.server\n") || strings.Contains(stderr, "/20") {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
}
