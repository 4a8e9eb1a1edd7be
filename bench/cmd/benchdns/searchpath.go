package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/bench/report"
)

// The search-path workload: what a pod of namespace searchNS asks for an
// external name with the kubelet's resolv.conf (search <ns>.svc.<zone>
// svc.<zone> <zone>, ndots:5). Without --autopath it asks the three zone
// names (NXDOMAIN each) and then the name; with it, skydns answers the
// first. Pod records tell skydns which namespace 127.0.0.1 is in.
const searchNS = "default"

// searchPathPart measures sky (without --autopath) on the plain mix, the
// zone NXDOMAINs of the walk and zone answers, and a second skydns with
// --autopath on the walk's first query, in interleaved rounds; it returns
// the runs and CPU profiles of sky under the zone NXDOMAINs and of the
// autopath skydns under the walk's first query.
func (b *bench) searchPathPart(ctx context.Context, sky *instance, warm, zipf string) (s report.SearchPath, profile, problem string) {
	files, err := b.searchPathFiles(zipf)
	if err != nil {
		return s, "", err.Error()
	}
	if _, err := b.etcdClient().Put(ctx, "/skydns/local/cluster/pod/"+searchNS+"/127-0-0-1", `{"host":"127.0.0.1"}`); err != nil {
		return s, "", "writing the pod record: " + err.Error()
	}
	auto, err := b.startServer(ctx, server{name: "skydns-autopath", argv: skydnsForwardArgv, goRuntime: true, pprof: true},
		startOptions{ready: answersExternal, extra: []string{"--autopath", "--pod-records=verified"}})
	if err != nil {
		return s, "", "skydns --autopath not serving: " + err.Error()
	}
	defer auto.stop()
	b.warmForwarder(ctx, auto, &forwardRow{}, warm)
	if err := b.warmSearch(ctx, auto, files[2]); err != nil {
		return s, "", err.Error()
	}
	s.Plain.Server, s.ZoneNX.Server, s.ZoneAnswer.Server, s.Autopath.Server = "skydns", "skydns", "skydns", "skydns-autopath"
	runs := []struct {
		row  *report.Row
		inst *instance
		file string
	}{{&s.Plain, sky, zipf}, {&s.ZoneNX, sky, files[0]}, {&s.ZoneAnswer, sky, files[1]}, {&s.Autopath, auto, files[2]}}
	for r := range b.cfg.rounds {
		for _, run := range runs {
			if ctx.Err() != nil {
				return s, "", ""
			}
			sample, err := b.measureFile(ctx, run.inst, "udp", run.file)
			if err != nil {
				return s, "", err.Error()
			}
			run.row.Samples = append(run.row.Samples, sample)
			b.logf("round %d search path %-30s %8.0f QPS, %s CPU/answer, %v", r+1, filepath.Base(run.file), sample.QPS, sample.CPUPerQuery, sample.Rcodes)
		}
	}
	if b.cfg.profile {
		profile = "skydns under the walk's zone NXDOMAINs:\n\n```\n" + b.profileUnder(ctx, sky, files[0], "skydns-zone-nxdomain.cpu.pprof") + "\n```\n\n" +
			"skydns --autopath under the walk's first query:\n\n```\n" + b.profileUnder(ctx, auto, files[2], "skydns-autopath.cpu.pprof") + "\n```\n\n"
	}
	return s, profile, ""
}

// warmSearch asks inst the walk's first queries once, untimed: their
// answers are then as warm as the plain names' after warmForwarder.
func (b *bench) warmSearch(ctx context.Context, inst *instance, file string) error {
	run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: file, MaxRuns: 1, CPU: b.cfg.loadCPU, Timeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("warming the search path up: %w", err)
	}
	b.logf("warmed %s's search path up: %d answered, %d lost, %.0f QPS", inst.name, run.Completed, run.Lost, run.QPS)
	return nil
}

// searchPathFiles writes, from the first cfg.searchQueries names of the Zipf
// mix, the walk's zone names (three lines a name), then zone answers (A
// of the services), then the walk's first name alone.
func (b *bench) searchPathFiles(zipf string) ([3]string, error) {
	names, err := firstNames(zipf, b.cfg.searchQueries)
	if err != nil {
		return [3]string{}, err
	}
	files := [3]string{filepath.Join(b.work, "search-zone-nxdomain"), filepath.Join(b.work, "search-zone-answer"), filepath.Join(b.work, "search-autopath")}
	domains := []string{searchNS + ".svc." + zone, "svc." + zone, zone}
	write := func(file string, line func(w io.Writer, i int)) error {
		return gendata.WriteFile(file, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			for i := range names {
				line(bw, i)
			}
			return bw.Flush()
		})
	}
	err = write(files[0], func(w io.Writer, i int) {
		for _, d := range domains {
			fmt.Fprintf(w, "%s%s. A\n", names[i], d)
		}
	})
	if err == nil {
		err = write(files[1], func(w io.Writer, i int) { fmt.Fprintf(w, "%s A\n", b.svcs[i%len(b.svcs)].FQDN(zone)) })
	}
	if err == nil {
		err = write(files[2], func(w io.Writer, i int) { fmt.Fprintf(w, "%s%s. A\n", names[i], domains[0]) })
	}
	return files, err
}

// firstNames reads the names of a query file's first n lines.
func firstNames(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for len(names) < n && sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), " ")
		names = append(names, name)
	}
	return names, sc.Err()
}

func (r results) searchPathMarkdown() string {
	switch {
	case r.searchProblem != "":
		return "### Search path (skydns)\n\nNot run: " + r.searchProblem + "\n\n"
	case len(r.searchPath.Plain.Samples) == 0:
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Search path (skydns)\n\nA pod of namespace %s asks for each external name of the Zipf mix (all cached) what ndots:5 makes it ask: without --autopath, `<name>.%s.svc.%s.`, `<name>.svc.%s.`, `<name>.%s.` (NXDOMAIN each), then `<name>`; "+
		"with --autopath (a second skydns, --pod-records=verified, a pod record for 127.0.0.1 in %s), only the first, answered behind a CNAME, after one untimed pass (as the mix's names are warm). %d interleaved rounds; CPU per name adds up the queries a name makes.\n\n",
		searchNS, searchNS, zone, zone, zone, searchNS, len(r.searchPath.Plain.Samples))
	b.WriteString(report.SearchPathTable(r.searchPath) + "\n")
	if r.searchProfile != "" {
		b.WriteString("CPU profiles (go tool pprof -top) of " + r.searchProfile)
	}
	return b.String()
}

func (r results) searchTargets() []report.Target {
	if len(r.searchPath.Plain.Samples) == 0 {
		return nil
	}
	return report.SearchPathTargets(r.searchPath)
}
