package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Image names. The CRI normalises `kubesky/skydns:latest` to
// docker.io/kubesky/skydns:latest, so that is the name imported; the e2e
// framework's images get the exact names it asks for.
const (
	pauseImage   = "registry.k8s.io/pause:3.10.1"
	ClientImage  = "docker.io/local/busybox:1"
	DebianImage  = "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7"
	AgnhostImage = "registry.k8s.io/e2e-test-images/agnhost:2.56"
	kubeskyUID   = 65532
)

// debianSuite is the Debian release the dnsutils root filesystem is made
// from, with the mirror apt uses unless DEBIAN_MIRROR says otherwise.
const (
	debianSuite   = "bookworm"
	debianMirror  = "http://deb.debian.org/debian"
	busyboxStatic = "/bin/busybox"
)

// images are every image the cluster imports: kubesky's four, as
// deploy/Dockerfile builds them (the same binaries), the pause image, a
// busybox client, and the two the e2e DNS tests use.
func (c Config) images(rootfs string, applets []string) map[string]image {
	base := []entry{file("healthcheck", c.bin("healthcheck"))}
	kubesky := func(name string, extra []entry, cmd ...string) image {
		return image{
			names:      []string{"docker.io/kubesky/" + name + ":latest"},
			layers:     []layer{{entries: append(append([]entry(nil), base...), extra...)}},
			entrypoint: []string{"/" + name},
			cmd:        cmd,
			user:       fmt.Sprintf("%d:%d", kubeskyUID, kubeskyUID),
		}
	}
	// The e2e DNS tests run agnhost's CoreDNS (/coredns) as a stand-in DNS server.
	agnhost := layer{entries: []entry{file("agnhost", c.bin("agnhost")), file("coredns", c.bin("coredns"))}}
	debian := layer{rootfs: rootfs}
	busybox := []entry{{name: "bin", dir: true, mode: 0o755}, {name: "tmp", dir: true, mode: 0o1777}, file("bin/busybox", busyboxStatic)}
	for _, applet := range applets {
		if applet != "busybox" {
			busybox = append(busybox, entry{name: "bin/" + applet, link: "busybox"})
		}
	}
	// kubesky/demo runs kubesky-demo (deploy/Dockerfile): the shared etcd's auth Job.
	demo := kubesky("demo", []entry{file("kubesky-demo", c.bin("kubesky-demo"))})
	demo.entrypoint = []string{"/kubesky-demo"}
	return map[string]image{
		"skydns": kubesky("skydns", []entry{file("skydns", c.bin("skydns")), file("skydns-holder", c.bin("skydns-holder")), file("skydns-node", c.bin("skydns-node")), ownedDir("data", kubeskyUID)},
			"--dns-addr=0.0.0.0:1053", "--http-addr=0.0.0.0:8081", "--etcd-data-dir=/data/etcd"),
		"kube2sky": kubesky("kube2sky", []entry{file("kube2sky", c.bin("kube2sky"))}, "--http-addr=0.0.0.0:8082"),
		"etcd":     kubesky("etcd", []entry{file("etcd", c.bin("etcd")), file("etcdctl", c.bin("etcdctl")), ownedDir("data", kubeskyUID)}),
		"demo":     demo,
		"pause":    {names: []string{pauseImage}, layers: []layer{agnhost}, entrypoint: []string{"/agnhost", "pause"}},
		"busybox":  {names: []string{ClientImage}, layers: []layer{{entries: busybox}}, cmd: []string{"sh"}},
		"dnsutils": {names: []string{DebianImage}, layers: []layer{debian}, cmd: []string{"/bin/sh"}},
		"agnhost":  {names: []string{AgnhostImage}, layers: []layer{debian, agnhost}, entrypoint: []string{"/agnhost"}},
	}
}

// buildImages writes each image's OCI tar into the images directory unless
// it is there from identical inputs, and returns the tars.
func (c Config) buildImages() ([]string, error) {
	p := c.paths()
	rootfs, err := c.debianRootFS()
	if err != nil {
		return nil, err
	}
	applets, err := busyboxApplets()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.images, 0o755); err != nil {
		return nil, err
	}
	var tars []string
	for name, img := range c.images(rootfs, applets) {
		tar := filepath.Join(p.images, name+".tar")
		if err := c.buildImage(img, tar); err != nil {
			return nil, fmt.Errorf("image %s: %w", name, err)
		}
		tars = append(tars, tar)
	}
	return tars, nil
}

func (c Config) buildImage(img image, tar string) error {
	key, err := inputKey(img)
	if err != nil {
		return err
	}
	keyFile := tar + ".key"
	if old, err := os.ReadFile(keyFile); err == nil && string(old) == key {
		if _, err := os.Stat(tar); err == nil {
			return nil
		}
	}
	start := time.Now()
	if err := writeOCI(img, tar); err != nil {
		return err
	}
	info, _ := os.Stat(tar)
	fmt.Fprintf(c.Out, "  built %s (%d MB) in %s\n", img.names[0], info.Size()>>20, time.Since(start).Round(100*time.Millisecond))
	return os.WriteFile(keyFile, []byte(key), 0o644)
}

// debianRootFS returns a Debian root filesystem with dnsutils (dig,
// nslookup) and glibc, made once with debootstrap.
func (c Config) debianRootFS() (string, error) {
	dir := filepath.Join(c.paths().build, "debian-rootfs")
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "", fmt.Errorf("debootstrap is not installed (apt-get install debootstrap): %w", err)
	}
	mirror := debianMirror
	if m := os.Getenv("DEBIAN_MIRROR"); m != "" {
		mirror = m
	}
	fmt.Fprintf(c.Out, "  debootstrap %s with dnsutils from %s (once, about 2 minutes)...\n", debianSuite, mirror)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.paths().build, 0o755); err != nil {
		return "", err
	}
	log := filepath.Join(c.paths().build, "debootstrap.log")
	cmd := exec.Command("debootstrap", "--variant=minbase", "--include=dnsutils", debianSuite, dir, mirror)
	out, err := os.Create(log)
	if err != nil {
		return "", err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("debootstrap failed (log %s): %w", log, err)
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// busyboxApplets lists the commands of Debian's static busybox.
func busyboxApplets() ([]string, error) {
	out, err := exec.Command(busyboxStatic, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list (apt-get install busybox-static): %w", busyboxStatic, err)
	}
	return strings.Fields(string(out)), nil
}

// importImages loads the tars into the containerd listening on socket.
func importImages(socket string, tars []string) error {
	for _, tar := range tars {
		if err := run("ctr", "--address", socket, "--namespace", "k8s.io", "images", "import", tar); err != nil {
			return err
		}
	}
	return nil
}
