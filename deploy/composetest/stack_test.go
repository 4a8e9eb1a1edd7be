package composetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// commandTimeout bounds every docker and compose command.
const commandTimeout = 5 * time.Minute

// stack is one compose project under test.
type stack struct {
	t       *testing.T
	compose []string // "docker compose" or "docker-compose"
	file    string
	project string
	env     []string // KUBESKY_*_PORT=<free port>, for every ports variable
	ports   map[string]int
}

// newStack prepares a project for the compose file at the repository root,
// with a free host port for each of portVars. It skips the test unless
// KUBESKY_COMPOSE_TEST=1.
func newStack(t *testing.T, file, project string, portVars ...string) *stack {
	t.Helper()
	if os.Getenv("KUBESKY_COMPOSE_TEST") != "1" {
		t.Skip("needs Docker and the images: run `make test-compose` or `make test-compose-ha`")
	}
	s := &stack{t: t, compose: composeCommand(t), file: filepath.Join("..", "..", file), project: project, ports: map[string]int{}}
	for _, v := range portVars {
		port := harness.FreePort(t)
		s.ports[v] = port
		s.env = append(s.env, v+"="+strconv.Itoa(port))
	}
	return s
}

// composeCommand is $KUBESKY_COMPOSE, else `docker compose` if it works,
// else docker-compose.
func composeCommand(t *testing.T) []string {
	if c := strings.Fields(os.Getenv("KUBESKY_COMPOSE")); len(c) > 0 {
		return c
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	t.Fatal("neither `docker compose` nor docker-compose is installed")
	return nil
}

// run runs a compose subcommand for the project and returns its output,
// failing the test on error.
func (s *stack) run(args ...string) string {
	s.t.Helper()
	full := append([]string{"-p", s.project, "-f", s.file}, args...)
	out, err := s.exec(append(s.compose[1:], full...)...)
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", strings.Join(s.compose, " "), strings.Join(full, " "), err, out)
	}
	return out
}

func (s *stack) exec(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.compose[0], args...)
	cmd.Env = append(os.Environ(), s.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// up starts the project from scratch and registers `down -v` (after
// printing the logs if the test failed).
func (s *stack) up() {
	s.t.Helper()
	s.down()
	s.t.Cleanup(func() {
		if s.t.Failed() {
			out, _ := s.exec(append(s.compose[1:], "-p", s.project, "-f", s.file, "logs", "--no-color", "--tail=40")...)
			s.t.Logf("compose logs:\n%s", out)
		}
		s.down()
	})
	start := time.Now()
	s.run("up", "-d")
	s.t.Logf("%s: up -d took %s", s.project, time.Since(start).Round(time.Second))
}

func (s *stack) down() {
	if out, err := s.exec(append(s.compose[1:], "-p", s.project, "-f", s.file, "down", "-v", "--remove-orphans")...); err != nil {
		s.t.Errorf("down -v: %v\n%s", err, out)
	}
}

// stop stops one service's container, as `docker compose stop` does.
func (s *stack) stop(service string) {
	s.t.Helper()
	start := time.Now()
	s.run("stop", service)
	s.t.Logf("stopped %s in %s", service, time.Since(start).Round(100*time.Millisecond))
}

// container returns the id of a service's container, running or not.
func (s *stack) container(service string) string {
	s.t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "-q",
		"--filter", "label=com.docker.compose.project="+s.project,
		"--filter", "label=com.docker.compose.service="+service).Output()
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" || strings.Contains(id, "\n") {
		s.t.Fatalf("container of %s: %q, %v", service, id, err)
	}
	return id
}

// waitExited waits until a one-shot service has exited with status 0.
func (s *stack) waitExited(service string, timeout time.Duration) {
	s.t.Helper()
	id := s.container(service)
	harness.Eventually(s.t, timeout, func() error {
		out, err := exec.Command("docker", "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", id).Output()
		state := strings.TrimSpace(string(out))
		switch {
		case err != nil:
			return err
		case state == "exited 0":
			return nil
		case strings.HasPrefix(state, "exited"):
			return harness.Permanent(fmt.Errorf("%s: %s", service, state))
		}
		return fmt.Errorf("%s: %s", service, state)
	})
}

// copyFrom copies a file out of a service's container into dir.
func (s *stack) copyFrom(service, path, dir string) string {
	s.t.Helper()
	dest := filepath.Join(dir, filepath.Base(path))
	if out, err := exec.Command("docker", "cp", s.container(service)+":"+path, dest).CombinedOutput(); err != nil {
		s.t.Fatalf("docker cp %s:%s: %v\n%s", service, path, err, out)
	}
	return dest
}

// addr is 127.0.0.1 and the host port of a ports variable.
func (s *stack) addr(portVar string) string {
	return harness.HostPort(s.ports[portVar])
}
