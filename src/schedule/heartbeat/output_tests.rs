//! HEARTBEAT.md emptiness, the output filter and dedupe.

use super::*;
use crate::time::test_tz::utc;
use crate::time::{DAY_MS, HOUR_MS};
use serde_json::json;

#[test]
fn heartbeat_md_emptiness() {
    let empty = [
        "",
        "\n  \n",
        "# HEARTBEAT.md\n\n## Tasks\n",
        "<!-- keep this file empty to skip heartbeats -->",
        "<!--\n- a task\n- another\n-->\n#",
        "===\n---",
        "===\n---\n***",
    ];
    for md in empty {
        assert!(heartbeat_md_is_empty(md), "{md:?} is empty");
    }
    let meaningful = [
        "- Check email",
        "# Tasks\nCall mum",
        "=== deploy ===",
        "<!-- x --> water plants",
    ];
    for md in meaningful {
        assert!(!heartbeat_md_is_empty(md), "{md:?} has work");
    }
}

#[test]
fn output_filter() {
    let long = "x".repeat(50);
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("HEARTBEAT_OK", None),
        ("  HEARTBEAT_OK.\n", None),
        ("**HEARTBEAT_OK**", None),
        ("heartbeat_ok!", None),
        ("`HEARTBEAT_OK` — ", None),
        ("HEARTBEAT_OK. All good", Some("All good")),
        ("HEARTBEAT_OK: the build is red.", Some("the build is red.")),
        (
            "Your flight is delayed. HEARTBEAT_OK",
            Some("Your flight is delayed."),
        ),
        ("Reminder sent — HEARTBEAT_OK.", Some("Reminder sent")),
        (
            "HEARTBEAT_OK Pay rent today HEARTBEAT_OK",
            Some("Pay rent today"),
        ),
        (
            "The token HEARTBEAT_OK sits in the middle",
            Some("The token HEARTBEAT_OK sits in the middle"),
        ),
        (
            "HEARTBEAT_OKAY is not the token",
            Some("HEARTBEAT_OKAY is not the token"),
        ),
        // Short answers without the token are delivered (v1 dropped ≤ 300 chars).
        ("Rain at 5pm.", Some("Rain at 5pm.")),
        (long.as_str(), Some(long.as_str())),
    ];
    for (answer, want) in cases {
        assert_eq!(strip_token(answer).as_deref(), want, "{answer:?}");
    }
}

#[test]
fn delivery_and_dedupe() {
    let now = utc("2026-11-24T10:00:00Z");
    let last = |text: &str, ago: i64| LastDelivery {
        text: text.into(),
        at_ms: now - ago,
    };
    let cases = [
        ("HEARTBEAT_OK", None, Delivery::Suppress(Suppressed::Ack)),
        ("  \n", None, Delivery::Suppress(Suppressed::Empty)),
        (
            "Rain at 5pm.",
            None,
            Delivery::Deliver("Rain at 5pm.".into()),
        ),
        (
            "Rain at 5pm.",
            Some(last("Rain at 5pm.", HOUR_MS)),
            Delivery::Suppress(Suppressed::Duplicate),
        ),
        (
            "Rain  at\n5pm. HEARTBEAT_OK",
            Some(last("Rain at 5pm.", HOUR_MS)),
            Delivery::Suppress(Suppressed::Duplicate),
        ),
        (
            "Rain at 5pm.",
            Some(last("Rain at 5pm.", DAY_MS)),
            Delivery::Deliver("Rain at 5pm.".into()),
        ),
        (
            "Rain at 6pm.",
            Some(last("Rain at 5pm.", HOUR_MS)),
            Delivery::Deliver("Rain at 6pm.".into()),
        ),
    ];
    for (answer, last, want) in cases {
        assert_eq!(
            decide_delivery(answer, last.as_ref(), now),
            want,
            "{answer:?}"
        );
    }
    let stored = serde_json::to_value(last("hi", 0)).unwrap();
    assert_eq!(stored, json!({"text": "hi", "atMs": now}));
}
