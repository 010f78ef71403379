//! What a Worker's size costs when an isolate starts it: the CPU of its
//! startup phase (the global scope, the wasm compiled and instantiated),
//! as `wrangler check startup` profiles it in workerd. That is the phase
//! Cloudflare limits and reports on deploy. The gateway is measured beside
//! both skeletons (the JS one and the workers-rs one), alternating, so the
//! gateway's wasm is weighed against the least a Worker pays to start.

use super::{percentile, round2, stats};
use gsv_e2e::harness::{gateway_dev_config, repo_root, without_table, wrangler_cli};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `runs` startups of each Worker, in turn.
pub fn bench(runs: usize) -> Value {
    let dir = tempfile::tempdir().unwrap();
    // The Worker as deployed, minus its static assets (served beside the
    // Worker, not started with it; the bench does not build the web UI).
    let gateway_config = dir.path().join("gateway.toml");
    std::fs::write(
        &gateway_config,
        without_table(&gateway_dev_config(), "[assets]"),
    )
    .unwrap();
    let support = repo_root().join("tests/support");
    let workers = [
        ("gateway", gateway_config),
        ("rustSkeleton", support.join("echo-rs/wrangler.toml")),
        ("jsSkeleton", support.join("echo/wrangler.toml")),
    ];
    let bundles: Vec<(&str, PathBuf)> = workers
        .iter()
        .map(|(name, config)| (*name, bundle(config, &dir.path().join(name))))
        .collect();
    let mut busy = vec![Vec::new(); bundles.len()];
    for run in 0..runs {
        for ((name, bundle), samples) in bundles.iter().zip(busy.iter_mut()) {
            let profile = dir.path().join(format!("{name}-{run}.cpuprofile"));
            samples.push(startup_busy_ms(bundle, &profile));
        }
    }
    let mut out = json!({
        "measured": "CPU of the startup phase (sampled time less idle) in `wrangler check \
                     startup`'s profile of the deploy bundle, alternating the three Workers",
    });
    for ((name, bundle), samples) in bundles.iter().zip(&busy) {
        out[name] = json!({
            "bundleBytes": std::fs::metadata(bundle).unwrap().len(),
            "busy": stats(samples),
        });
    }
    let p50 = |i: usize| percentile(&busy[i], 50.0);
    out["gatewayMinusRustSkeletonP50Ms"] = json!(round2(p50(0) - p50(1)));
    out["rustSkeletonMinusJsSkeletonP50Ms"] = json!(round2(p50(1) - p50(2)));
    out
}

/// The deploy bundle of the Worker `config` describes, as `wrangler deploy`
/// would upload it (built from the prebuilt output: no `[build]` runs).
fn bundle(config: &Path, out: &Path) -> PathBuf {
    let mut deploy = wrangler_cli();
    deploy.args(["deploy", "--dry-run", "--outfile"]).arg(out);
    run(deploy.arg("--config").arg(config));
    out.to_path_buf()
}

/// One startup of `bundle` in a new workerd: its profile's busy time.
fn startup_busy_ms(bundle: &Path, profile: &Path) -> f64 {
    let mut check = wrangler_cli();
    check
        .args(["check", "startup", "--workerBundle"])
        .arg(bundle);
    run(check.arg("--outfile").arg(profile));
    let profile: Value = serde_json::from_slice(&std::fs::read(profile).unwrap()).unwrap();
    busy_ms(&profile)
}

/// Runs a wrangler command in the repository; it must succeed.
fn run(wrangler: &mut Command) {
    let out = wrangler.current_dir(repo_root()).output().unwrap();
    assert!(
        out.status.success(),
        "{wrangler:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A V8 CPU profile's sampled time outside `(idle)`, in ms.
fn busy_ms(profile: &Value) -> f64 {
    let idle: Vec<u64> = profile["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["callFrame"]["functionName"] == "(idle)")
        .filter_map(|n| n["id"].as_u64())
        .collect();
    let samples = profile["samples"].as_array().unwrap();
    let deltas = profile["timeDeltas"].as_array().unwrap();
    let us: i64 = samples
        .iter()
        .zip(deltas)
        .filter(|(s, _)| !s.as_u64().is_some_and(|id| idle.contains(&id)))
        .filter_map(|(_, d)| d.as_i64())
        .sum();
    us as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_is_the_sampled_time_outside_idle() {
        let profile = json!({
            "nodes": [
                {"id": 1, "callFrame": {"functionName": "(root)"}},
                {"id": 2, "callFrame": {"functionName": "(idle)"}},
                {"id": 3, "callFrame": {"functionName": "Instance"}},
            ],
            "samples": [3, 2, 1, 3, 2],
            "timeDeltas": [12000, 500, 250, 1250, 2000],
        });
        assert_eq!(busy_ms(&profile), 13.5);
    }
}
