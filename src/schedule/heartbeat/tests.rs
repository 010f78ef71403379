//! Heartbeat decisions: durations, config merge, active hours in zones,
//! skip reasons, HEARTBEAT.md emptiness, the output filter and dedupe.

use super::*;
use crate::config::DEFAULT_SYSTEM_PROMPT;
use crate::time::test_tz::{utc, Tz};
use crate::time::{Utc, DAY_MS, HOUR_MS, MINUTE_MS};
use serde_json::json;

#[test]
fn durations() {
    let ok = [
        ("0", 0),
        ("0m", 0),
        ("30m", 30 * MINUTE_MS),
        ("1h30m", 90 * MINUTE_MS),
        ("1h 30m", 90 * MINUTE_MS),
        ("45s", 45_000),
        ("2d", 2 * DAY_MS),
        ("1H", HOUR_MS),
        ("90m", 90 * MINUTE_MS),
    ];
    for (s, want) in ok {
        assert_eq!(parse_duration(s), Ok(want), "{s}");
    }
    for s in [
        "",
        "30",
        "m",
        "1.5h",
        "1h30",
        "abc",
        "-5m",
        "99999999999999999d",
    ] {
        assert_eq!(
            parse_duration(s),
            Err(HeartbeatError::BadDuration(s.into())),
            "{s}"
        );
    }
}

fn prompt() -> String {
    crate::config::default_config()["agents"]["defaultHeartbeat"]["prompt"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn config_merge() {
    assert_ne!(prompt(), DEFAULT_SYSTEM_PROMPT);
    let defaults = HeartbeatConfig {
        every_ms: 30 * MINUTE_MS,
        prompt: prompt(),
        target: Target::Last,
        active_hours: Some(ActiveHours {
            start_min: 8 * 60,
            end_min: 23 * 60,
            timezone: None,
        }),
        model: None,
        light_context: true,
    };
    assert_eq!(heartbeat_config(None, "main"), Ok(defaults.clone()));
    let agents = json!({
        "defaultHeartbeat": {"every": "1h", "target": "none", "activeHours": {"start": "22:00", "end": "06:00", "timezone": "user"}},
        "list": [
            {"id": "main", "heartbeat": {"every": "0", "model": "cheap/model", "lightContext": false}},
            {"id": "ops", "heartbeat": {"target": "discord", "activeHours": null, "prompt": "Check the pager."}},
            {"id": "tz", "heartbeat": {"activeHours": {"start": "09:00", "end": "24:00", "timezone": "Asia/Tokyo"}}}
        ]
    });
    let night = Some(ActiveHours {
        start_min: 22 * 60,
        end_min: 6 * 60,
        timezone: None,
    });
    let cases = [
        (
            "main",
            HeartbeatConfig {
                every_ms: 0,
                target: Target::None,
                active_hours: night.clone(),
                model: Some("cheap/model".into()),
                light_context: false,
                ..defaults.clone()
            },
        ),
        (
            "ops",
            HeartbeatConfig {
                every_ms: HOUR_MS,
                prompt: "Check the pager.".into(),
                target: Target::Channel("discord".into()),
                active_hours: None,
                ..defaults.clone()
            },
        ),
        (
            "tz",
            HeartbeatConfig {
                every_ms: HOUR_MS,
                target: Target::None,
                active_hours: Some(ActiveHours {
                    start_min: 9 * 60,
                    end_min: 1440,
                    timezone: Some("Asia/Tokyo".into()),
                }),
                ..defaults.clone()
            },
        ),
        (
            "other",
            HeartbeatConfig {
                every_ms: HOUR_MS,
                target: Target::None,
                active_hours: night,
                ..defaults
            },
        ),
    ];
    for (agent, want) in cases {
        assert_eq!(heartbeat_config(Some(&agents), agent), Ok(want), "{agent}");
    }
    let bad = [
        (
            json!({"every": "often"}),
            HeartbeatError::BadDuration("often".into()),
        ),
        (
            json!({"every": 30}),
            HeartbeatError::WrongType {
                field: "every",
                expected: "a duration such as \"30m\"",
            },
        ),
        (
            json!({"activeHours": {"start": "8am"}}),
            HeartbeatError::BadTime("8am".into()),
        ),
        (
            json!({"activeHours": {"start": "24:30"}}),
            HeartbeatError::BadTime("24:30".into()),
        ),
        (
            json!({"lightContext": "yes"}),
            HeartbeatError::WrongType {
                field: "lightContext",
                expected: "true or false",
            },
        ),
    ];
    for (hb, want) in bad {
        let agents = json!({ "defaultHeartbeat": hb });
        assert_eq!(
            heartbeat_config(Some(&agents), "main"),
            Err(want),
            "{agents}"
        );
    }
}

#[test]
fn active_hours() {
    let hours = |start: u32, end: u32| ActiveHours {
        start_min: start,
        end_min: end,
        timezone: None,
    };
    let berlin = Tz::named("Europe/Berlin");
    let ny = Tz::named("America/New_York");
    let kolkata = Tz::named("Asia/Kolkata");
    // (hours, zone, instant, inside)
    let cases: [(ActiveHours, &dyn TimeZone, &str, bool); 14] = [
        (hours(480, 1380), &berlin, "2026-11-24T06:59:00Z", false), // 07:59 CET
        (hours(480, 1380), &berlin, "2026-11-24T07:00:00Z", true),  // 08:00
        (hours(480, 1380), &berlin, "2026-11-24T21:59:00Z", true),  // 22:59
        (hours(480, 1380), &berlin, "2026-11-24T22:00:00Z", false), // 23:00, end exclusive
        (hours(480, 1380), &Utc, "2026-11-24T22:00:00Z", true),     // never UTC by accident
        (hours(480, 1380), &berlin, "2026-07-01T06:00:00Z", true),  // 08:00 CEST
        // Overnight 22:00–06:00.
        (hours(1320, 360), &ny, "2026-11-25T03:30:00Z", true), // 22:30 EST
        (hours(1320, 360), &ny, "2026-11-25T10:59:00Z", true), // 05:59
        (hours(1320, 360), &ny, "2026-11-25T11:00:00Z", false), // 06:00
        (hours(1320, 360), &ny, "2026-11-25T17:00:00Z", false), // 12:00
        // start == end: always.
        (hours(600, 600), &ny, "2026-11-25T17:00:00Z", true),
        // Half-hour zone; 24:00 end.
        (hours(540, 1440), &kolkata, "2026-11-24T03:29:00Z", false), // 08:59 IST
        (hours(540, 1440), &kolkata, "2026-11-24T03:30:00Z", true),  // 09:00
        (hours(540, 1440), &kolkata, "2026-11-24T18:29:00Z", true),  // 23:59
    ];
    for (h, tz, at, want) in cases {
        assert_eq!(h.contains(tz, utc(at)), want, "{h:?} at {at}");
    }
    let own = ActiveHours {
        timezone: Some("Asia/Tokyo".into()),
        ..hours(0, 0)
    };
    assert_eq!(own.zone_name("Europe/Berlin"), "Asia/Tokyo");
    assert_eq!(hours(0, 0).zone_name("Europe/Berlin"), "Europe/Berlin");
}

/// (config, manual, now, HEARTBEAT.md, busy, result)
type SkipCase<'a> = (
    &'a HeartbeatConfig,
    bool,
    i64,
    Option<&'a str>,
    bool,
    Result<(), SkipReason>,
);

#[test]
fn skip_reasons() {
    let cfg = heartbeat_config(None, "main").unwrap();
    let berlin = Tz::named("Europe/Berlin");
    let day = utc("2026-11-24T10:00:00Z");
    let night = utc("2026-11-24T23:30:00Z");
    let disabled = HeartbeatConfig {
        every_ms: 0,
        ..cfg.clone()
    };
    let cases: [SkipCase; 8] = [
        (&cfg, false, day, Some("- check mail"), false, Ok(())),
        (
            &disabled,
            false,
            day,
            Some("- check mail"),
            false,
            Err(SkipReason::Disabled),
        ),
        (
            &cfg,
            false,
            night,
            Some("- check mail"),
            false,
            Err(SkipReason::OutsideActiveHours),
        ),
        (
            &cfg,
            false,
            day,
            None,
            false,
            Err(SkipReason::NoHeartbeatFile),
        ),
        (
            &cfg,
            false,
            day,
            Some("# Tasks\n<!-- none -->"),
            false,
            Err(SkipReason::EmptyHeartbeatFile),
        ),
        (
            &cfg,
            false,
            day,
            Some("- check mail"),
            true,
            Err(SkipReason::SessionBusy),
        ),
        (&disabled, true, night, None, true, Ok(())),
        (&cfg, true, night, Some(""), false, Ok(())),
    ];
    for (config, manual, now_ms, md, busy, want) in cases {
        let c = BeatCheck {
            config,
            manual,
            now_ms,
            tz: &berlin,
            heartbeat_md: md,
            session_busy: busy,
        };
        assert_eq!(check(&c), want, "{md:?} manual={manual} busy={busy}");
    }
    let texts: Vec<String> = [
        SkipReason::Disabled,
        SkipReason::OutsideActiveHours,
        SkipReason::NoHeartbeatFile,
        SkipReason::EmptyHeartbeatFile,
        SkipReason::SessionBusy,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        texts,
        [
            "heartbeats are disabled (every: 0)",
            "outside active hours",
            "no HEARTBEAT.md in the workspace",
            "HEARTBEAT.md has nothing to do",
            "the target session is busy",
        ]
    );
    assert_eq!(next_beat(&cfg, day), Some(day + 30 * MINUTE_MS));
    assert_eq!(next_beat(&disabled, day), None);
}

#[test]
fn targets() {
    let cases = [
        (Target::Last, Some("whatsapp"), true),
        (Target::Last, None, false),
        (Target::None, Some("whatsapp"), false),
        (Target::Channel("discord".into()), Some("Discord"), true),
        (Target::Channel("discord".into()), Some("whatsapp"), false),
    ];
    for (t, last, want) in cases {
        assert_eq!(t.delivers_to(last), want, "{t:?} {last:?}");
    }
}
