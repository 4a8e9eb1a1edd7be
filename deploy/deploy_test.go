package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEveryFlagUsedExists checks that each flag the deploy files, the
// compose files, the Dockerfile and the READMEs pass to skydns, kube2sky,
// kubesky-demo or healthcheck is one the built binary knows.
func TestEveryFlagUsedExists(t *testing.T) {
	t.Run("the Kubernetes manifests", func(t *testing.T) {
		objs, err := Manifests()
		if err != nil {
			t.Fatal(err)
		}
		checkUses(t, requireUses(t, usesInManifests(t, objs)))
	})
	t.Run("the shared-etcd manifests", func(t *testing.T) {
		objs, err := SharedEtcd()
		if err != nil {
			t.Fatal(err)
		}
		checkUses(t, requireUses(t, usesInManifests(t, objs)))
	})
	t.Run("the node-local manifests", func(t *testing.T) {
		objs, err := NodeLocal()
		if err != nil {
			t.Fatal(err)
		}
		checkUses(t, requireUses(t, usesInManifests(t, objs)))
	})
	for _, file := range []string{"../docker-compose.yml", "../docker-compose.ha.yml"} {
		t.Run(filepath.Base(file), func(t *testing.T) { checkUses(t, requireUses(t, usesInCompose(t, file))) })
	}
	t.Run("the Dockerfile", func(t *testing.T) { checkUses(t, requireUses(t, usesInDockerfile(t, "Dockerfile"))) })
	for name, file := range map[string]string{"deploy/README.md": "README.md", "docs/demo.md": "../docs/demo.md", "README.md": "../README.md"} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(file); os.IsNotExist(err) && name == "README.md" {
				t.Skip("the repository has no README.md yet")
			}
			uses := usesInMarkdown(t, file)
			t.Logf("%d command lines run kubesky's binaries", len(uses))
			checkUses(t, uses)
		})
	}
}

// requireUses fails when a file that must run kubesky's binaries seems
// not to: the parsing would be broken.
func requireUses(t *testing.T, uses []use) []use {
	t.Helper()
	if len(uses) < 2 {
		t.Fatalf("found only %d uses of kubesky's binaries", len(uses))
	}
	return uses
}

func TestTheFlagCheckCatchesMistakes(t *testing.T) {
	t.Run("a misspelt flag in a code block is found", func(t *testing.T) {
		md := filepath.Join(t.TempDir(), "x.md")
		os.WriteFile(md, []byte("text\n```sh\nFOO=1 bin/skydns --dns-addr 127.0.0.1:53 \\\n  --zoen cluster.local | cat\n```\n"), 0o600)
		uses := usesInMarkdown(t, md)
		if len(uses) != 1 || !slices.Contains(flagNames(uses[0].args), "zoen") {
			t.Fatalf("uses %+v", uses)
		}
		if set := binaries.get(t, "skydns", ""); set["zoen"] || !set["zone"] {
			t.Fatal("skydns's flag set is wrong")
		}
	})
	t.Run("kubesky-demo's flags are looked up per subcommand", func(t *testing.T) {
		u := use{binary: "kubesky-demo", args: []string{"pki", "--dir=/pki"}}
		if u.subcommand() != "pki" || !binaries.get(t, "kubesky-demo", "pki")["dir"] || binaries.get(t, "kubesky-demo", "apply")["dir"] {
			t.Fatal("subcommand flag sets mixed up")
		}
	})
	t.Run("values and shorthands are told apart", func(t *testing.T) {
		got := flagNames([]string{"--zone=cluster.local", "-q", "http://x", "--", "--not-a-flag"})
		if !slices.Equal(got, []string{"zone", "q"}) {
			t.Fatalf("flag names %v", got)
		}
	})
}

// TestKustomization checks that kustomization.yaml lists every manifest,
// names every image the Deployment uses, and patches the same cluster IP
// that service.yaml carries.
func TestKustomization(t *testing.T) {
	k := readKustomization(t, "kubernetes")
	entries, _ := files.ReadDir("kubernetes")
	t.Run("every manifest is a resource", func(t *testing.T) {
		names := manifestNames(entries)
		if !slices.Equal(sortedCopy(k.Resources), names) {
			t.Fatalf("resources %v, files %v", k.Resources, names)
		}
	})
	objs, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("every image is named", func(t *testing.T) { checkImagesNamed(t, k, objs) })
	t.Run("the patched cluster IP is service.yaml's", func(t *testing.T) {
		ip := serviceClusterIP(t, objs, "kube-dns")
		if len(k.Patches) != 1 || !strings.Contains(k.Patches[0].Patch, "value: "+ip) {
			t.Fatalf("patches %+v, service.yaml clusterIP %s", k.Patches, ip)
		}
	})
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func images(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			out = append(out, c.(map[string]any)["image"].(string))
		}
	}
	return out
}

func serviceClusterIP(t *testing.T, objs []*unstructured.Unstructured, name string) string {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == "Service" && obj.GetName() == name {
			ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
			return ip
		}
	}
	t.Fatalf("no Service %s", name)
	return ""
}
