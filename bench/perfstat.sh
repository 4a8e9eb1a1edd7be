#!/usr/bin/env bash
# perfstat.sh PID PORT QUERIES [dnsperf flags...] runs dnsperf for 10 s
# (pinned to LOAD_CPU, default 1) against the DNS server 127.0.0.1:PORT
# while `perf stat` (Debian's linux-perf) counts the server process PID's
# CPU time, context switches, wake-ups and system calls, and prints each
# per answered query. QUERIES is a dnsperf query file (bin/bench/gendata
# --queries writes one). Where the fast path's CPU goes beyond the kernel
# floor's: docs/fastpath.md.
set -euo pipefail
if (($# < 3)); then
	echo "usage: bench/perfstat.sh PID PORT QUERIES [dnsperf flags...]" >&2
	exit 2
fi
pid=$1 port=$2 queries=$3
shift 3
events=task-clock,context-switches,sched:sched_wakeup,raw_syscalls:sys_enter,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep
counts="$(mktemp)"
trap 'rm -f "$counts"' EXIT
perf stat -x, -e "$events" -p "$pid" -o "$counts" -- sleep 11 &
perf=$!
out="$(taskset -c "${LOAD_CPU:-1}" dnsperf -s 127.0.0.1 -p "$port" -d "$queries" -l 10 -q 100 "$@" 2>&1)"
wait "$perf"
n="$(awk '/Queries completed:/ {print $3}' <<<"$out")"
echo "queries answered: $n, QPS $(awk '/Queries per second:/ {print $4}' <<<"$out")"
awk -F, -v n="$n" '!/^#/ && NF > 3 && $1 != "" {
	if ($3 == "task-clock") printf "%-30s %8.2f µs/query\n", "CPU (task-clock)", $1 * 1000 / n
	else printf "%-30s %8.4f /query\n", $3, $1 / n
}' "$counts"
