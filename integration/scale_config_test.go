package integration

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The environment variables that size BenchmarkKube2SkyAtScale; unset means
// the default (10k Services, 50k endpoints, 100 changes/s).
const (
	envScaleServices      = "KUBESKY_SCALE_SERVICES"       // headless Services to load (default 10000)
	envScalePods          = "KUBESKY_SCALE_PODS"           // running pods to load, with --pod-records=verified (default none)
	envScaleChurnRate     = "KUBESKY_SCALE_CHURN_RATE"     // changes per second (default 100)
	envScalePodChurnRate  = "KUBESKY_SCALE_POD_CHURN_RATE" // pod changes per second in part 4, with pods (default 20)
	envScaleChurnDuration = "KUBESKY_SCALE_CHURN_DURATION" // how long the churn lasts (default 60s)
	envScaleResync        = "KUBESKY_SCALE_RESYNC"         // kube2sky's --resync-period in parts 1 and 2 (default 5s)
	envScaleOut           = "KUBESKY_SCALE_OUT"            // the Markdown file written ("-": none)
	envScaleProfile       = "KUBESKY_SCALE_PROFILE"        // a file for kube2sky's heap profile after the sync ("": none)
)

// defaultScaleOut is where the tables go, relative to integration/ (the
// working directory of its tests).
const defaultScaleOut = "../bench/results/kube2sky.md"

// scaleConfig sizes one run of BenchmarkKube2SkyAtScale.
type scaleConfig struct {
	Services      int           // headless Services, endpointsPerService ready endpoints each
	Pods          int           // running pods; 0 runs kube2sky without pod records
	ChurnRate     int           // changes per second in part 3
	PodChurnRate  int           // pod changes per second in part 4 (run only with pods)
	ChurnDuration time.Duration // how long parts 3 and 4 issue changes
	Resync        time.Duration // kube2sky's --resync-period in parts 1 and 2
	Out           string        // the Markdown file; "" writes none
	Profile       string        // where kube2sky's heap profile goes after the sync; "" takes none
}

// ChurnChanges is how many changes part 3 makes.
func (c scaleConfig) ChurnChanges() int {
	return int(int64(c.ChurnRate) * int64(c.ChurnDuration) / int64(time.Second))
}

// PodChurnChanges is how many pod changes part 4 makes.
func (c scaleConfig) PodChurnChanges() int {
	return int(int64(c.PodChurnRate) * int64(c.ChurnDuration) / int64(time.Second))
}

// podsTaken is how many preloaded pods part 4 deletes: every other change.
func (c scaleConfig) podsTaken() int { return c.PodChurnChanges() / len(podChurnKinds) }

// preloadedTaken is how many preloaded Services the churn changes: every
// change but the Service creations (one in churnKinds) takes one of its own.
func (c scaleConfig) preloadedTaken() int {
	n := c.ChurnChanges()
	creations := (n + len(churnKinds) - 1) / len(churnKinds)
	return n - creations
}

// parseScaleConfig reads the configuration from getenv (os.Getenv in the
// benchmark) and checks it.
func parseScaleConfig(getenv func(string) string) (scaleConfig, error) {
	c := scaleConfig{Services: 10000, ChurnRate: 100, PodChurnRate: 20, ChurnDuration: 60 * time.Second, Resync: 5 * time.Second, Out: defaultScaleOut}
	var err error
	if c.Services, err = envInt(getenv, envScaleServices, c.Services); err != nil {
		return c, err
	}
	if c.Pods, err = envInt(getenv, envScalePods, c.Pods); err != nil {
		return c, err
	}
	if c.ChurnRate, err = envInt(getenv, envScaleChurnRate, c.ChurnRate); err != nil {
		return c, err
	}
	if c.PodChurnRate, err = envInt(getenv, envScalePodChurnRate, c.PodChurnRate); err != nil {
		return c, err
	}
	if c.ChurnDuration, err = envDuration(getenv, envScaleChurnDuration, c.ChurnDuration); err != nil {
		return c, err
	}
	if c.Resync, err = envDuration(getenv, envScaleResync, c.Resync); err != nil {
		return c, err
	}
	c.Profile = getenv(envScaleProfile)
	switch out := getenv(envScaleOut); out {
	case "":
	case "-":
		c.Out = ""
	default:
		c.Out = out
	}
	return c, c.check()
}

// check rejects sizes the benchmark cannot run.
func (c scaleConfig) check() error {
	if c.ChurnChanges() < 1 {
		return fmt.Errorf("%s × %s makes no change: want at least one", envScaleChurnRate, envScaleChurnDuration)
	}
	if c.Resync < time.Second {
		return fmt.Errorf("%s=%v: want at least 1s (kube2sky's minimum)", envScaleResync, c.Resync)
	}
	if taken := c.preloadedTaken(); taken > c.Services {
		return fmt.Errorf("the churn changes %d preloaded Services (%d changes, 3 of 4 on one of its own) but %s=%d: "+
			"raise it or lower %s or %s", taken, c.ChurnChanges(), envScaleServices, c.Services, envScaleChurnRate, envScaleChurnDuration)
	}
	if c.Pods > 0 && c.podsTaken() > c.Pods {
		return fmt.Errorf("the pod churn deletes %d preloaded pods (every other one of %d changes) but %s=%d: "+
			"raise it or lower %s or %s", c.podsTaken(), c.PodChurnChanges(), envScalePods, c.Pods, envScalePodChurnRate, envScaleChurnDuration)
	}
	return nil
}

// envInt reads a positive integer.
func envInt(getenv func(string) string, name string, def int) (int, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive whole number", name, s)
	}
	return n, nil
}

// envDuration reads a positive Go duration ("10s", "1m30s").
func envDuration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 10s", name, s)
	}
	return d, nil
}

// machineNote describes the machine, with load (see loadAverage), for the
// results file.
func machineNote(load string) string {
	model := "unknown CPU"
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(info)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s, load average %s", runtime.NumCPU(), model, runtime.Version(), load)
}

// loadAverage returns the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
