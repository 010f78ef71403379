#!/usr/bin/env bash
# What the Durable Objects' SQLite commits cost under the bench (Linux,
# `perf`, root or perf_event_paranoid <= -1). Runs the bench that
# `scripts/bench.sh` built under `perf record` with syscall tracepoints, and
# prints, for each phase of the bench and each workerd process, its commits
# (each ends in an fsync of the object's WAL, on the thread that runs the
# objects), how long those fsyncs took, the WAL pages each commit wrote, and
# whether it wrote past the WAL's end so far (a young object's WAL grows
# with each commit until its first checkpoint; then commits reuse it).
# BENCHMARKS.md (session 27) reads it.
#
# Usage: bash scripts/trace-commits.sh [bench flags, e.g. --only turns,tools]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/release/bench ] || [ ! -f build/index_bg.wasm ]; then
  echo "build first: bash scripts/bench.sh --only turns" >&2
  exit 1
fi
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
export GSV_BIN=${GSV_BIN:-$PWD/target/release/gsv}
events=syscalls:sys_enter_fsync,syscalls:sys_exit_fsync,syscalls:sys_enter_pwrite64
# The bench's log says when each phase starts; stamped with the clock the
# samples carry (CLOCK_MONOTONIC).
perf record -q -k CLOCK_MONOTONIC -a -e "$events" -o "$out/perf.data" -- \
  ./target/release/bench "$@" > "$out/bench.json" \
  2> >(python3 -c 'import sys, time
for l in sys.stdin: print(f"{time.monotonic():.6f} {l}", end="", flush=True)' > "$out/phases.txt")
perf script -i "$out/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null > "$out/events.txt"
python3 - "$out" <<'EOF'
import collections, json, re, statistics, sys
out = sys.argv[1]
phases = []
for line in open(f"{out}/phases.txt"):
    at, _, text = line.partition(" ")
    if text.startswith("[bench] "):
        phases.append((float(at), text[8:].strip()))
def phase_at(t):
    name = None
    for start, text in phases:
        if t >= start:
            name = text
    return name
# A WAL frame is a 24-byte header and a page, each its own pwrite.
pages = collections.Counter()
grew = collections.Counter()
end = collections.Counter()
entered = {}
commits = collections.defaultdict(list)
for line in open(f"{out}/events.txt"):
    m = re.match(r"\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+syscalls:(\S+):\s*(.*)", line)
    if not m or m.group(1) != "workerd":
        continue
    _, pid, tid, t, event, args = m.groups()
    t = float(t)
    if event == "sys_enter_pwrite64":
        fd = re.search(r"fd: (0x[0-9a-f]+)", args).group(1)
        count = int(re.search(r"count: (0x[0-9a-f]+)", args).group(1), 16)
        at = int(re.search(r"pos: (0x[0-9a-f]+)", args).group(1), 16)
        if count >= 4096:
            pages[(pid, fd)] += 1
            grew[(pid, fd)] += at + count > end[(pid, fd)]
        end[(pid, fd)] = max(end[(pid, fd)], at + count)
    elif event == "sys_enter_fsync":
        fd = re.search(r"fd: (0x[0-9a-f]+)", args).group(1)
        entered[tid] = (t, pages.pop((pid, fd), 0), grew.pop((pid, fd), 0) > 0)
    elif event == "sys_exit_fsync" and tid in entered:
        start, written, extended = entered.pop(tid)
        commits[(phase_at(start), pid)].append(((t - start) * 1000, written, extended))
# The gateway is the process that commits in the gateway's phases; the
# others run the echo worker's skeletons.
gateway = collections.Counter()
for (phase, pid), rows in commits.items():
    if phase and phase.startswith(("sequential turns", "tool round trips")):
        gateway[pid] += len(rows)
gateway_pid = gateway.most_common(1)[0][0] if gateway else None
report = []
for (phase, pid), rows in sorted(commits.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
    ms = sorted(r[0] for r in rows)
    p50 = lambda xs: round(statistics.median(xs), 3) if xs else None
    report.append({
        "phase": phase,
        "workerd": "gateway" if pid == gateway_pid else f"other ({pid})",
        "commits": len(rows),
        "fsyncMsP50": round(statistics.median(ms), 3),
        "fsyncMsP90": round(ms[int(len(ms) * 0.9)], 3),
        "fsyncMsTotal": round(sum(ms), 1),
        "walPagesPerCommitP50": statistics.median(r[1] for r in rows),
        "commitsPastWalEnd": sum(1 for r in rows if r[2]),
        "fsyncMsP50PastWalEnd": p50([r[0] for r in rows if r[2]]),
        "fsyncMsP50WithinWal": p50([r[0] for r in rows if r[1] and not r[2]]),
    })
print(json.dumps({"commits": report}, indent=2))
EOF
