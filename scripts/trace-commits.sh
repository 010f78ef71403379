#!/usr/bin/env bash
# What the Durable Objects' SQLite commits cost under the bench (Linux,
# `perf`, root or perf_event_paranoid <= -1). Runs the bench that
# `scripts/bench.sh` built under `perf record` with syscall tracepoints, and
# prints, for each phase of the bench and each workerd process, its commits,
# how long their fsyncs took, the WAL pages each wrote, and whether it wrote
# past the end its WAL had reached (a young object's WAL grows with each
# commit until its first checkpoint; then commits write over it).
# BENCHMARKS.md (session 27) reads it.
#
# A commit is an fsync of a file that got WAL frames (a 24-byte header and a
# page, each its own pwrite) since its last fsync; the fsyncs of a
# checkpoint, which write no frames, are left out. The fsyncs run on the
# thread that runs the objects. The bench's own report is kept in
# target/trace-commits/bench.json, and its log goes to stderr as it runs.
#
# Usage: bash scripts/trace-commits.sh [bench flags, e.g. --only turns,tools]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/release/bench ] || [ ! -f build/index_bg.wasm ]; then
  echo "build first: bash scripts/bench.sh --only turns" >&2
  exit 1
fi
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
kept=target/trace-commits
mkdir -p "$kept"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
export GSV_BIN=${GSV_BIN:-$PWD/target/release/gsv}
events=syscalls:sys_enter_fsync,syscalls:sys_exit_fsync,syscalls:sys_enter_pwrite64,syscalls:sys_enter_close
# The bench's log says when each phase starts; each line is stamped with the
# clock the tracepoints carry (CLOCK_MONOTONIC) and passed on to stderr.
mkfifo "$out/log"
python3 -c 'import sys, time
for l in sys.stdin:
    print(f"{time.monotonic():.6f} {l}", end="", flush=True)
    print(l, end="", file=sys.stderr, flush=True)' < "$out/log" > "$out/phases.txt" &
stamper=$!
status=0
perf record -q -k CLOCK_MONOTONIC -a -e "$events" -o "$out/perf.data" -- \
  ./target/release/bench "$@" > "$kept/bench.json" 2> "$out/log" || status=$?
# Its last lines are written once the bench's stderr closes.
wait "$stamper"
if [ "$status" -ne 0 ]; then
  echo "the bench failed (exit $status); its report: $kept/bench.json" >&2
  exit "$status"
fi
perf script -i "$out/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null > "$out/events.txt"
python3 - "$out" <<'EOF'
import collections, json, re, statistics, sys
out = sys.argv[1]
# A phase is a line of the bench's log; two phases may say the same (the
# two native ReadFile variants), so each is numbered. A warning is no phase.
phases = []
for line in open(f"{out}/phases.txt"):
    at, _, text = line.partition(" ")
    if text.startswith("[bench] ") and "warning" not in text and "failed" not in text:
        phases.append((float(at), f"{len(phases) + 1}. {text[8:].strip()}"))
def phase_at(t):
    name = None
    for start, text in phases:
        if t >= start:
            name = text
    return name
def hex_arg(name, args):
    return int(re.search(name + r": (0x[0-9a-f]+)", args).group(1), 16)
frames = collections.Counter()   # WAL frames written since the fd's last fsync
grew = collections.Counter()     # of them, those past the end written so far
end = collections.Counter()      # the end of what was written through the fd
entered = {}
commits = collections.defaultdict(list)
for line in open(f"{out}/events.txt"):
    m = re.match(r"\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+syscalls:(\S+):\s*(.*)", line)
    if not m or m.group(1) != "workerd":
        continue
    _, pid, tid, t, event, args = m.groups()
    t = float(t)
    if event == "sys_enter_close":
        # The fd may come back for another file.
        fd = (pid, hex_arg("fd", args))
        end.pop(fd, None)
        frames.pop(fd, None)
        grew.pop(fd, None)
    elif event == "sys_enter_pwrite64":
        fd = (pid, hex_arg("fd", args))
        count, at = hex_arg("count", args), hex_arg("pos", args)
        if count == 24:
            frames[fd] += 1
            grew[fd] += at + 24 > end[fd]
        end[fd] = max(end[fd], at + count)
    elif event == "sys_enter_fsync":
        fd = (pid, hex_arg("fd", args))
        entered[tid] = (t, frames.pop(fd, 0), grew.pop(fd, 0) > 0)
    elif event == "sys_exit_fsync" and tid in entered:
        start, written, extended = entered.pop(tid)
        if written:
            commits[(phase_at(start), pid)].append(((t - start) * 1000, written, extended))
# The gateway is the process that commits most in the gateway's phases; the
# others run the echo worker's skeletons.
gateway = collections.Counter()
for (phase, pid), rows in commits.items():
    if phase and re.search(r"\. (sequential turns|tool round trips)", phase):
        gateway[pid] += len(rows)
gateway_pid = gateway.most_common(1)[0][0] if gateway else None
if gateway_pid is None:
    print("no gateway phase in this run: every process is listed as other", file=sys.stderr)
def p50(xs):
    return round(statistics.median(xs), 3) if xs else None
report = []
def order(item):
    (phase, pid), _ = item
    return (int(phase.split(".")[0]) if phase else 0, pid)
for (phase, pid), rows in sorted(commits.items(), key=order):
    ms = sorted(r[0] for r in rows)
    report.append({
        "phase": phase,
        "workerd": "gateway" if pid == gateway_pid else f"other ({pid})",
        "commits": len(rows),
        "fsyncMsP50": p50(ms),
        "fsyncMsP90": round(ms[int(len(ms) * 0.9)], 3),
        "fsyncMsTotal": round(sum(ms), 1),
        "walPagesPerCommitP50": statistics.median(r[1] for r in rows),
        "commitsPastWalEnd": sum(1 for r in rows if r[2]),
        "fsyncMsP50PastWalEnd": p50([r[0] for r in rows if r[2]]),
        "fsyncMsP50WithinWal": p50([r[0] for r in rows if not r[2]]),
    })
print(json.dumps({"phases": [text for _, text in phases], "commits": report}, indent=2))
EOF
