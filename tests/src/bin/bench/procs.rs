//! The workerd processes of a local run, read from `/proc`: their memory
//! (lifecycle, files coming in) and their CPU time (the cost of a turn).

use std::collections::HashMap;

/// The `workerd` processes descending from `root` (serve.mjs's node).
pub fn workerd_pids(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parent = HashMap::new();
    let mut name = HashMap::new();
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let ppid = stat[close + 2..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0);
        parent.insert(pid, ppid);
        name.insert(pid, stat[open + 1..close].to_string());
    }
    let descends = |mut p: u32| {
        while p > 1 {
            if p == root {
                return true;
            }
            p = parent.get(&p).copied().unwrap_or(0);
        }
        false
    };
    name.iter()
        .filter(|(pid, n)| n.as_str() == "workerd" && descends(**pid))
        .map(|(pid, _)| *pid)
        .collect()
}

/// VmRSS (kB) summed over the `workerd` processes descending from `root`.
pub fn workerd_rss_kb(root: u32) -> u64 {
    workerd_pids(root)
        .into_iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .sum()
}

/// User + system CPU time (ms) so far of the `workerd` processes
/// descending from `root`, all their threads included.
pub fn workerd_cpu_ms(root: u32) -> f64 {
    workerd_pids(root)
        .into_iter()
        .filter_map(process_cpu_ms)
        .sum()
}

/// A process's user + system CPU time so far (all its threads, finished
/// ones included), from `/proc/PID/stat`; clock-tick resolution (10 ms).
pub fn process_cpu_ms(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let (utime, stime): (f64, f64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((utime + stime) * 1000.0 / ticks)
}
