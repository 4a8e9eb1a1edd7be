package deploy

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// usesInManifests finds the args and exec probes of every container whose
// image or command is one of our binaries.
func usesInManifests(t *testing.T, objs []*unstructured.Unstructured) []use {
	t.Helper()
	var uses []use
	for _, obj := range objs {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			uses = append(uses, containerUses(Describe(obj), c.(map[string]any))...)
		}
	}
	return uses
}

func containerUses(where string, c map[string]any) []use {
	var uses []use
	where = fmt.Sprintf("%s container %v", where, c["name"])
	image := fmt.Sprint(c["image"])
	if command := stringList(c["command"]); len(command) > 0 && binaryOf(image) != "" {
		image = command[0] // another binary of our image
	}
	if b := binaryOf(image); b != "" {
		uses = append(uses, use{where: where, binary: b, args: stringList(c["args"])})
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		cmd, _, _ := unstructured.NestedStringSlice(c, probe, "exec", "command")
		if len(cmd) > 0 && binaryOf(cmd[0]) != "" {
			uses = append(uses, use{where: where + " " + probe, binary: binaryOf(cmd[0]), args: cmd[1:]})
		}
	}
	return uses
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// usesInCompose finds each service's command (the image's binary) and
// healthcheck in a compose file.
func usesInCompose(t *testing.T, file string) []use {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image       string `json:"image"`
			Command     any    `json:"command"`
			Healthcheck struct {
				Test []string `json:"test"`
			} `json:"healthcheck"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var uses []use
	for name, svc := range doc.Services {
		where := file + " service " + name
		if b := binaryOf(svc.Image); b != "" {
			uses = append(uses, use{where: where, binary: b, args: stringList(svc.Command)})
		}
		if test := svc.Healthcheck.Test; len(test) > 1 && test[0] == "CMD" && binaryOf(test[1]) != "" {
			uses = append(uses, use{where: where + " healthcheck", binary: binaryOf(test[1]), args: test[2:]})
		}
	}
	return uses
}

// usesInDockerfile finds the CMD arguments of each stage whose ENTRYPOINT
// is one of our binaries, and every HEALTHCHECK command.
func usesInDockerfile(t *testing.T, file string) []use {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var uses []use
	var entrypoint string
	var cmd []string
	flush := func() {
		if entrypoint != "" && cmd != nil {
			uses = append(uses, use{where: file + " CMD of " + entrypoint, binary: entrypoint, args: cmd})
		}
		entrypoint, cmd = "", nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "FROM "):
			flush()
		case strings.HasPrefix(line, "ENTRYPOINT "):
			entrypoint = binaryOf(jsonArray(t, line)[0])
		case strings.HasPrefix(line, "CMD "):
			cmd = jsonArray(t, line)
		case strings.HasPrefix(line, "HEALTHCHECK "):
			hc := jsonArray(t, line)
			uses = append(uses, use{where: file + " HEALTHCHECK", binary: binaryOf(hc[0]), args: hc[1:]})
		}
	}
	flush()
	return uses
}

func jsonArray(t *testing.T, line string) []string {
	t.Helper()
	var list []string
	i := strings.IndexByte(line, '[')
	if i < 0 || yaml.Unmarshal([]byte(line[i:]), &list) != nil || len(list) == 0 {
		t.Fatalf("not an exec-form instruction: %s", line)
	}
	return list
}

// usesInMarkdown finds command lines in fenced code blocks that run one of
// our binaries (bin/skydns, ./kube2sky, kubesky-demo ...), joining lines
// continued with a backslash and splitting at |, && and ;.
func usesInMarkdown(t *testing.T, file string) []use {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var uses []use
	for i, line := range codeLines(string(data)) {
		for _, segment := range commandSplit.Split(line, -1) {
			fields := strings.Fields(stripComment(segment))
			for len(fields) > 0 && strings.Contains(fields[0], "=") { // VAR=value prefixes
				fields = fields[1:]
			}
			if len(fields) > 0 && binaryOf(fields[0]) != "" && !strings.Contains(fields[0], "kubesky/") {
				uses = append(uses, use{where: fmt.Sprintf("%s code line %d: %s", file, i+1, strings.TrimSpace(segment)), binary: binaryOf(fields[0]), args: fields[1:]})
			}
		}
	}
	return uses
}

var commandSplit = regexp.MustCompile(`\|\||&&|[|;]`)

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// codeLines returns the lines inside ``` fences, continuations joined.
func codeLines(md string) []string {
	var lines []string
	inFence, pending := false, ""
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			continue
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		lines = append(lines, pending+line)
		pending = ""
	}
	return lines
}
