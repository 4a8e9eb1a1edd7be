package deploy

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestDecode(t *testing.T) {
	t.Run("a stream with empty documents yields only the objects", func(t *testing.T) {
		data := "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n# only a comment\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: x\n"
		objs, err := Decode("s.yaml", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, o := range objs {
			got = append(got, Describe(o))
		}
		if strings.Join(got, " ") != "Service/a ConfigMap/x/b" {
			t.Fatalf("objects %v", got)
		}
	})
	bad := map[string]struct{ data, want string }{
		"a document without apiVersion": {"kind: Service\nmetadata:\n  name: a\n", "s.yaml: document 1: no apiVersion"},
		"a document without kind":       {"apiVersion: v1\nmetadata:\n  name: a\n", "document 1: no kind"},
		"an object without a name":      {"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Service\n", "document 2: Service without metadata.name"},
		"text that is not YAML":         {"apiVersion: v1\nkind: [unclosed\n", "document 1"},
		"a YAML list, not an object":    {"- a\n- b\n", "document 1"},
	}
	for name, c := range bad {
		t.Run(name+" is an error naming it", func(t *testing.T) {
			_, err := Decode("s.yaml", []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestReadDirSkipsTheKustomizationAndOtherFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"d/b.yaml":             {Data: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: b\n")},
		"d/a.yml":              {Data: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n")},
		"d/kustomization.yaml": {Data: []byte("resources: [a.yml]\n")},
		"d/README.md":          {Data: []byte("# not YAML\n")},
	}
	objs, err := ReadDir(fsys, "d")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetName() != "b" {
		t.Fatalf("got %d objects: %v", len(objs), objs)
	}
}

func TestEmbeddedFilesDecode(t *testing.T) {
	t.Run("the examples are the three kinds of Service and the headless endpoints", func(t *testing.T) {
		objs, err := Examples()
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]string{}
		for _, o := range objs {
			kinds[o.GetName()] = o.GetKind()
		}
		want := map[string]string{"web": "Service", "db": "Service", "db-demo": "EndpointSlice", "docs": "Service"}
		for name, kind := range want {
			if kinds[name] != kind {
				t.Errorf("%s: kind %q, want %q", name, kinds[name], kind)
			}
		}
	})
	t.Run("the manifests are all in kube-system or cluster-scoped", func(t *testing.T) {
		objs, err := Manifests()
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) < 6 {
			t.Fatalf("only %d objects", len(objs))
		}
		for _, o := range objs {
			if ns := o.GetNamespace(); ns != "" && ns != "kube-system" {
				t.Errorf("%s in namespace %s", Describe(o), ns)
			}
		}
	})
}
