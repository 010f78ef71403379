//! `bench --median FILE...`: several runs' reports as one, the way
//! BENCHMARKS.md reports a figure (the median of three runs, each ratio
//! taken within its run). `scripts/bench.sh --runs N` runs the bench N
//! times and prints this.
//!
//! Each number is the median over the runs that have it (the mean of the
//! middle two for an even count, to three decimals unless it is whole);
//! each yes/no, a target's among them, says in how many runs it held
//! (`"2 of 3"`). Text and lists are the first run's: paths, names and
//! profiles' tops have no median. A value's kind is its first run's that
//! is not null.

use serde_json::{json, Map, Value};

/// The runs' reports, merged; `files` are where the runs were written.
pub fn merge(runs: &[Value], files: &[String]) -> Value {
    let all: Vec<&Value> = runs.iter().collect();
    json!({
        "runs": runs.len(),
        "files": files,
        "median": median_of(&all, runs.len()),
    })
}

/// The median of one key's values across the runs that have it; `runs`
/// is how many runs there were in all (for "k of N").
fn median_of(values: &[&Value], runs: usize) -> Value {
    match values.iter().find(|v| !v.is_null()) {
        Some(Value::Object(_)) => {
            let mut keys: Vec<&String> = Vec::new();
            for key in values
                .iter()
                .filter_map(|v| v.as_object())
                .flat_map(Map::keys)
            {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            let merged = keys.into_iter().map(|key| {
                let present: Vec<&Value> = values.iter().filter_map(|v| v.get(key)).collect();
                (key.clone(), median_of(&present, runs))
            });
            Value::Object(merged.collect())
        }
        Some(Value::Number(_)) => median(values),
        Some(Value::Bool(_)) => {
            let held = values.iter().filter(|v| v.as_bool() == Some(true)).count();
            json!(format!("{held} of {runs}"))
        }
        Some(first) => (*first).clone(),
        None => Value::Null,
    }
}

fn median(values: &[&Value]) -> Value {
    let mut numbers: Vec<&serde_json::Number> = values
        .iter()
        .filter_map(|v| match v {
            Value::Number(n) => Some(n),
            _ => None,
        })
        .collect();
    let float = |n: &serde_json::Number| n.as_f64().unwrap_or(f64::NAN);
    numbers.sort_by(|a, b| float(a).total_cmp(&float(b)));
    let mid = numbers.len() / 2;
    match numbers.len() {
        0 => Value::Null,
        n if n % 2 == 1 => Value::Number(numbers[mid].clone()),
        _ => match (numbers[mid - 1].as_i64(), numbers[mid].as_i64()) {
            (Some(a), Some(b)) if (a + b) % 2 == 0 => json!((a + b) / 2),
            _ => {
                let mean = (float(numbers[mid - 1]) + float(numbers[mid])) / 2.0;
                json!((mean * 1000.0).round() / 1000.0)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_the_median_and_targets_say_how_often_they_held() {
        let run = |turn: f64, count: u64, met: bool, extra: Option<f64>| {
            let mut r = json!({
                "turnP50OverSkeletonP50": turn,
                "turn": {"count": count, "p50Ms": turn * 0.9},
                "gsvBinary": format!("/bin/gsv-{count}"),
                "targets": {"turnP50AtMost2_5xSkeleton": met},
                "top": [{"fn": "exec", "ms": turn}],
            });
            if let Some(x) = extra {
                r["onlySome"] = json!(x);
            }
            r
        };
        let runs = [
            run(2.6, 1000, false, None),
            run(2.2, 999, true, Some(4.0)),
            run(2.4, 1001, true, Some(5.0)),
        ];
        let files = ["a.json".to_string(), "b.json".into(), "c.json".into()];
        assert_eq!(
            merge(&runs, &files),
            json!({
                "runs": 3,
                "files": ["a.json", "b.json", "c.json"],
                "median": {
                    "turnP50OverSkeletonP50": 2.4,
                    "turn": {"count": 1000, "p50Ms": 2.4 * 0.9},
                    "gsvBinary": "/bin/gsv-1000",
                    "targets": {"turnP50AtMost2_5xSkeleton": "2 of 3"},
                    "top": [{"fn": "exec", "ms": 2.6}],
                    "onlySome": 4.5,
                },
            })
        );
    }

    #[test]
    fn an_even_count_takes_the_mean_of_the_middle_two_and_nulls_give_way() {
        let runs = [
            json!({"bytes": 10, "errors": 0, "ratio": 2.0, "toolMs": null, "met": null}),
            json!({"bytes": 14, "errors": 1, "ratio": 2.5, "toolMs": 3, "met": true}),
        ];
        assert_eq!(
            merge(&runs, &[]),
            json!({
                "runs": 2,
                "files": [],
                "median": {"bytes": 12, "errors": 0.5, "ratio": 2.25, "toolMs": 3, "met": "1 of 2"},
            })
        );
    }
}
