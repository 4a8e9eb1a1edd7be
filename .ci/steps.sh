# shellcheck shell=bash
# steps.sh: the timing rules of .ci/run, sourced by it.
#
#   step NAME BUDGET_MINUTES COMMAND...   runs COMMAND as one timed step
#   skip NAME REASON                      records a step that cannot run here, and why
#   background NAME COMMAND...            starts COMMAND at the lowest CPU priority (nice 19)
#   await NAME BUDGET_MINUTES             a step that waits for it and prints its output
#   steps_report                          the table of every step (run on exit)
#
# The whole run has two limits, checked by a watchdog while a step runs:
# past CI_WARN_SECONDS (45 min) it says so loudly; past CI_STOP_SECONDS (80 min) it prints the table with the
# slowest steps and stops the run, so a run never reaches CI's hard limit of 90 minutes and dies
# without a word. A step past its own budget is marked in the table.

CI_WARN_SECONDS="${CI_WARN_SECONDS:-2700}"
CI_STOP_SECONDS="${CI_STOP_SECONDS:-4800}"
ci_start=$SECONDS
ci_pid=$BASHPID # the run's own shell: the only one that reports on exit, not its subshells
ci_times="$(mktemp)" # one line per finished step: seconds, budget seconds, status, name
ci_stop_flag="$ci_times.stopped"

# step_line NAME SECONDS BUDGET STATUS records one finished step.
step_line() {
	printf '%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$1" >>"$ci_times"
}

# minutes SECONDS prints m:ss.
minutes() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

steps_report() {
	local total=$((SECONDS - ci_start)) secs budget status name mark
	echo
	echo "== CI steps (wall time; budget per step in .ci/run)"
	printf '  %-52s %8s %8s  %s\n' step time budget ""
	while IFS=$'\t' read -r secs budget status name; do
		mark="$status"
		if ((secs > budget)); then mark="$status, OVER BUDGET"; fi
		printf '  %-52s %8s %8s  %s\n' "$name" "$(minutes "$secs")" "$(minutes "$budget")" "$mark"
	done <"$ci_times"
	printf '  %-52s %8s %8s\n' "total" "$(minutes "$total")" "$(minutes "$CI_STOP_SECONDS")"
	echo "  slowest: $(slowest_steps)"
	if ((total > CI_WARN_SECONDS)); then
		echo "!! CI took $(minutes "$total"), past the $(minutes "$CI_WARN_SECONDS") warning line: cut the slowest steps"
	fi
}

# slowest_steps prints the three slowest finished steps with their times (not the background
# commands, whose time the steps beside them share).
slowest_steps() {
	grep -v '(background)$' "$ci_times" | sort -t$'\t' -k1,1nr | head -3 |
		awk -F'\t' '{printf "%s%s (%d:%02d)", (NR > 1 ? ", " : ""), $4, $1 / 60, $1 % 60}'
}

# watchdog PID NAME BUDGET watches the step running as process group PID: it warns once the run
# passes the warning line, and past the stop line it records the step and kills it.
watchdog() {
	local pid="$1" name="$2" budget="$3" warned=0 step_start=$SECONDS elapsed
	while kill -0 "$pid" 2>/dev/null; do
		elapsed=$((SECONDS - ci_start))
		if ((elapsed > CI_WARN_SECONDS && !warned)); then
			echo "!! CI has run $(minutes "$elapsed"), past the $(minutes "$CI_WARN_SECONDS") warning line (step: $name)"
			warned=1
		fi
		if ((elapsed > CI_STOP_SECONDS)); then
			echo "!! CI stopped after $(minutes "$elapsed"), past its $(minutes "$CI_STOP_SECONDS") limit, in step: $name"
			step_line "$name" $((SECONDS - step_start)) "$budget" "KILLED"
			touch "$ci_stop_flag"
			kill -TERM -- "-$pid" 2>/dev/null
			return
		fi
		sleep "${CI_WATCH_INTERVAL:-5}"
	done
}

# step NAME BUDGET_MINUTES COMMAND... runs COMMAND in a process group of its own, watched.
step() {
	local name="$1" budget=$(($2 * 60)) start=$SECONDS rc=0 pid dog
	shift 2
	echo
	echo "== $name (budget ${budget}s) — at $(minutes $((SECONDS - ci_start)))"
	set -m
	"$@" &
	pid=$!
	set +m
	watchdog "$pid" "$name" "$budget" &
	dog=$!
	wait "$pid" || rc=$?
	kill "$dog" 2>/dev/null || true
	wait "$dog" 2>/dev/null || true
	if [[ -e "$ci_stop_flag" ]]; then
		echo "!! slowest steps: $(slowest_steps)"
		exit 1
	fi
	if ((rc != 0)); then
		step_line "$name" $((SECONDS - start)) "$budget" "FAILED ($rc)"
		echo "!! step failed: $name (exit $rc)"
		exit "$rc"
	fi
	step_line "$name" $((SECONDS - start)) "$budget" ok
}

# background NAME COMMAND... starts COMMAND niced in a process group of its own, its output in a
# file: it takes only the CPU the steps leave idle (a test waiting on a timer, a cluster starting
# pods), so building what later steps need costs their wall time little. Its exit status lands
# in NAME's .rc file.
declare -A ci_bg_pid ci_bg_start
background() {
	local name="$1" log="$ci_times.$1"
	shift
	echo
	echo "== $name: started in the background (nice 19) — at $(minutes $((SECONDS - ci_start)))"
	set -m
	(
		rc=0
		nice -n 19 "$@" >"$log" 2>&1 || rc=$?
		echo "$rc" >"$log.rc"
	) &
	ci_bg_pid[$name]=$!
	set +m
	ci_bg_start[$name]=$SECONDS
}

# await NAME BUDGET_MINUTES is the step that waits for background NAME; its row in the table is
# the wait, and a row "(background)" holds the command's whole time.
await() {
	step "$1: wait" "$2" await_background "$1"
}

await_background() {
	local log="$ci_times.$1"
	while [[ ! -e "$log.rc" ]]; do sleep 2; done
	cat "$log"
	step_line "$1 (background)" $((SECONDS - ci_bg_start[$1])) $((SECONDS - ci_bg_start[$1])) "exit $(cat "$log.rc")"
	return "$(cat "$log.rc")"
}

# stop_background ends every background command still running (the run failed or was stopped).
stop_background() {
	local pid
	for pid in "${ci_bg_pid[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || true
	done
}

# skip NAME REASON records a step this machine cannot run, with the reason printed.
skip() {
	echo
	echo "== $1: skipped: $2"
	step_line "$1" 0 0 "skipped: $2"
}

# on_exit ends what runs in the background and prints the table, in the run's shell only.
on_exit() {
	[[ $BASHPID == "$ci_pid" ]] || return 0
	stop_background
	steps_report
	rm -f "$ci_times" "$ci_times".*
}

trap on_exit EXIT
