use super::*;
use crate::session::meta::SessionMeta;
use crate::time::test_tz::{utc, Tz};
use crate::time::Utc;
use gsv_protocol::TokenCounts;
use std::collections::BTreeMap;

#[test]
fn policy_parsing() {
    for (v, want) in [
        (json!({"mode": "manual"}), Some(ResetPolicy::Manual)),
        (
            json!({"mode": "daily"}),
            Some(ResetPolicy::Daily { at_hour: 4 }),
        ),
        (
            json!({"mode": "daily", "atHour": 0}),
            Some(ResetPolicy::Daily { at_hour: 0 }),
        ),
        (
            json!({"mode": "daily", "atHour": 24}),
            Some(ResetPolicy::Daily { at_hour: 4 }),
        ),
        (
            json!({"mode": "idle"}),
            Some(ResetPolicy::Idle { idle_minutes: 60 }),
        ),
        (
            json!({"mode": "idle", "idleMinutes": 15}),
            Some(ResetPolicy::Idle { idle_minutes: 15 }),
        ),
        (json!({"mode": "weekly"}), None),
        (json!({}), None),
    ] {
        assert_eq!(ResetPolicy::from_json(&v), want, "{v}");
    }
    for p in [
        ResetPolicy::Manual,
        ResetPolicy::Daily { at_hour: 7 },
        ResetPolicy::Idle { idle_minutes: 5 },
    ] {
        assert_eq!(ResetPolicy::from_json(&p.to_json()), Some(p));
    }
    assert_eq!(
        ResetPolicy::Idle { idle_minutes: 5 }.to_json(),
        json!({"mode": "idle", "idleMinutes": 5})
    );
    assert_eq!(ResetPolicy::default().mode(), "daily");
}

#[test]
fn policy_defaults_from_config() {
    assert_eq!(
        ResetPolicy::default_from_config(&Config::default()),
        ResetPolicy::Daily { at_hour: 4 }
    );
    let config = Config::from_overrides(
        json!({"session": {"defaultResetPolicy": {"mode": "idle", "idleMinutes": 30}}}),
    );
    assert_eq!(
        ResetPolicy::default_from_config(&config),
        ResetPolicy::Idle { idle_minutes: 30 }
    );
    assert_eq!(
        ResetPolicy::effective(None, &config),
        ResetPolicy::Idle { idle_minutes: 30 }
    );
    assert_eq!(
        ResetPolicy::effective(Some(&json!({"mode": "manual"})), &config),
        ResetPolicy::Manual
    );
    assert_eq!(
        ResetPolicy::effective(Some(&json!({"mode": "?"})), &config),
        ResetPolicy::Idle { idle_minutes: 30 }
    );
}

#[test]
fn manual_and_idle() {
    assert!(!reset_due(&ResetPolicy::Manual, 0, i64::MAX, &Utc));
    let idle = ResetPolicy::Idle { idle_minutes: 60 };
    assert!(!reset_due(&idle, 1_000, 1_000 + 3_600_000, &Utc));
    assert!(reset_due(&idle, 1_000, 1_000 + 3_600_001, &Utc));
}

#[test]
fn daily_in_utc() {
    let daily = ResetPolicy::Daily { at_hour: 4 };
    let due = |last: &str, now: &str| reset_due(&daily, utc(last), utc(now), &Utc);
    assert!(due("2026-03-01T03:59:59Z", "2026-03-01T04:00:00Z"));
    assert!(!due("2026-03-01T04:00:00Z", "2026-03-01T23:00:00Z"));
    // Before 04:00 the boundary is yesterday's.
    assert!(!due("2026-02-28T05:00:00Z", "2026-03-01T03:00:00Z"));
    assert!(due("2026-02-28T03:00:00Z", "2026-03-01T03:00:00Z"));
    assert_eq!(
        daily_boundary(&Utc, utc("2026-03-01T03:00:00Z"), 4),
        utc("2026-02-28T04:00:00Z")
    );
}

#[test]
fn daily_uses_the_user_time_zone() {
    // Not the Worker's UTC clock: 03:30 → 04:30 New York time:
    let ny = Tz::named("America/New_York");
    let daily = ResetPolicy::Daily { at_hour: 4 };
    let (last, now) = (utc("2024-06-01T07:30:00Z"), utc("2024-06-01T08:30:00Z"));
    assert!(reset_due(&daily, last, now, &ny));
    assert!(!reset_due(&daily, last, now, &Utc));
    assert_eq!(daily_boundary(&ny, now, 4), utc("2024-06-01T08:00:00Z"));

    let kolkata = Tz::named("Asia/Kolkata");
    assert_eq!(
        daily_boundary(&kolkata, utc("2026-05-01T23:00:00Z"), 4),
        utc("2026-05-01T22:30:00Z")
    );
    assert_eq!(
        daily_boundary(&kolkata, utc("2026-05-01T22:29:00Z"), 4),
        utc("2026-04-30T22:30:00Z")
    );
}

#[test]
fn daily_across_dst_changes() {
    let ny = Tz::named("America/New_York");
    // 02:00 does not exist on 2024-03-10: the boundary is the jump itself.
    let at_2 = ResetPolicy::Daily { at_hour: 2 };
    assert_eq!(
        daily_boundary(&ny, utc("2024-03-10T12:00:00Z"), 2),
        utc("2024-03-10T07:00:00Z")
    );
    assert!(reset_due(
        &at_2,
        utc("2024-03-10T06:59:00Z"),
        utc("2024-03-10T07:00:00Z"),
        &ny
    ));
    assert!(!reset_due(
        &at_2,
        utc("2024-03-10T06:59:00Z"),
        utc("2024-03-10T06:59:59Z"),
        &ny
    ));
    // 01:00 happens twice on 2024-11-03: one boundary (the first), no second reset.
    let at_1 = ResetPolicy::Daily { at_hour: 1 };
    assert_eq!(
        daily_boundary(&ny, utc("2024-11-03T06:30:00Z"), 1),
        utc("2024-11-03T05:00:00Z")
    );
    assert!(!reset_due(
        &at_1,
        utc("2024-11-03T05:30:00Z"),
        utc("2024-11-03T06:30:00Z"),
        &ny
    ));
    // The day after a change uses the new offset.
    assert_eq!(
        daily_boundary(&ny, utc("2024-11-04T12:00:00Z"), 4),
        utc("2024-11-04T09:00:00Z")
    );

    let berlin = Tz::named("Europe/Berlin");
    assert_eq!(
        daily_boundary(&berlin, utc("2025-03-30T12:00:00Z"), 4),
        utc("2025-03-30T02:00:00Z")
    );
    assert_eq!(
        daily_boundary(&berlin, utc("2025-03-30T01:59:00Z"), 4),
        utc("2025-03-29T03:00:00Z")
    );

    // Lord Howe jumps 02:00 → 02:30 (+10:30 → +11) on 2025-10-05.
    let lhi = Tz::named("Australia/Lord_Howe");
    assert_eq!(
        daily_boundary(&lhi, utc("2025-10-05T00:00:00Z"), 2),
        utc("2025-10-04T15:30:00Z")
    );
    assert_eq!(
        daily_boundary(&lhi, utc("2025-10-06T00:00:00Z"), 2),
        utc("2025-10-05T15:00:00Z")
    );
}

fn input(reason: ResetReason, message_count: u64, extract: bool) -> ResetInput<'static> {
    ResetInput {
        reason,
        session_key: "agent:main:main",
        agent_id: "main",
        old_session_id: "old-1",
        new_session_id: "new-2",
        message_count,
        tokens: TokenCounts {
            input: 100,
            output: 20,
            total: 120,
            ..Default::default()
        },
        now_ms: utc("2026-03-02T09:00:00Z"),
        last_activity_ms: utc("2026-03-01T23:30:00Z"),
        extract_memories: extract,
    }
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn auto_reset_plan() {
    let plan = ResetPlan::new(
        &input(ResetReason::Auto, 3, true),
        &Tz::named("Europe/Berlin"),
    );
    assert_eq!(
        plan,
        ResetPlan {
            reason: ResetReason::Auto,
            session_key: "agent:main:main".into(),
            agent_id: "main".into(),
            old_session_id: "old-1".into(),
            new_session_id: "new-2".into(),
            message_count: 3,
            started_at_ms: utc("2026-03-02T09:00:00Z"),
            archive_key: "agents/main/sessions/old-1.jsonl.gz".into(),
            archive_metadata: strings(&[
                ("sessionKey", "agent:main:main"),
                ("sessionId", "old-1"),
                ("agentId", "main"),
                ("messageCount", "3"),
                ("archivedAt", "1772442000000"),
                ("inputTokens", "100"),
                ("outputTokens", "20"),
                ("totalTokens", "120"),
            ]),
            // 23:30 UTC is already 00:30 on March 2nd in Berlin.
            memory_key: "agents/main/memory/2026-03-02.md".into(),
            memory_time: "00:30".into(),
            media_prefix: "media/agent:main:main/".into(),
            steps: ResetStep::ALL.to_vec(),
            done: 0,
        }
    );
    assert_eq!(plan.memory_marker(), "<!-- gsv:reset:old-1 -->");
    assert_eq!(
        ResetStep::ALL.map(ResetStep::number),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    );
}

#[test]
fn manual_reset_of_an_empty_session() {
    let plan = ResetPlan::new(&input(ResetReason::Manual, 0, true), &Utc);
    assert_eq!(
        plan.steps,
        vec![
            ResetStep::DeleteMedia,
            ResetStep::ClearMessages,
            ResetStep::NewSessionId,
            ResetStep::RecordPreviousSessionId,
            ResetStep::ZeroTokenCounters,
            ResetStep::SetLastResetAt,
        ]
    );
    assert_eq!(plan.memory_key, "agents/main/memory/2026-03-01.md");
    assert_eq!(plan.summary_text(), "Session reset. Archived 0 messages.");
    let no_extraction = ResetPlan::new(&input(ResetReason::Manual, 2, false), &Utc);
    assert_eq!(
        &no_extraction.steps[..2],
        &[ResetStep::ArchiveMessages, ResetStep::DeleteMedia]
    );
}

#[test]
fn messages_are_cleared_only_after_a_verified_archive() {
    let mut plan = ResetPlan::new(&input(ResetReason::Auto, 3, false), &Utc);
    assert_eq!(
        plan.complete(ResetStep::ClearMessages),
        Err(ResetError::OutOfOrder {
            expected: Some(ResetStep::ArchiveMessages),
            got: ResetStep::ClearMessages
        })
    );
    assert_eq!(
        plan.complete(ResetStep::ArchiveMessages),
        Err(ResetError::ArchiveNotVerified(
            "complete the archive step with verify_archive".into()
        ))
    );
    let good = ArchiveCheck {
        messages_written: 3,
        size: Some(120),
        custom_metadata: plan.archive_metadata.clone(),
    };
    let bad = [
        (
            ArchiveCheck {
                messages_written: 2,
                ..good.clone()
            },
            "2 of 3 messages written",
        ),
        (
            ArchiveCheck {
                size: None,
                ..good.clone()
            },
            "agents/main/sessions/old-1.jsonl.gz is missing",
        ),
        (
            ArchiveCheck {
                size: Some(0),
                ..good.clone()
            },
            "agents/main/sessions/old-1.jsonl.gz is empty",
        ),
        (
            ArchiveCheck {
                custom_metadata: BTreeMap::new(),
                ..good.clone()
            },
            "agents/main/sessions/old-1.jsonl.gz has other metadata",
        ),
    ];
    for (check, why) in bad {
        assert_eq!(
            plan.verify_archive(&check),
            Err(ResetError::ArchiveNotVerified(why.into()))
        );
        assert_eq!(plan.next_step(), Some(ResetStep::ArchiveMessages));
    }
    assert_eq!(plan.verify_archive(&good), Ok(()));
    assert_eq!(plan.next_step(), Some(ResetStep::DeleteMedia));
    assert_eq!(plan.complete(ResetStep::DeleteMedia), Ok(()));
    assert_eq!(plan.complete(ResetStep::ClearMessages), Ok(()));
    assert_eq!(
        ResetError::OutOfOrder {
            expected: None,
            got: ResetStep::DeleteMedia
        }
        .to_string(),
        "reset step DeleteMedia out of order (next: None)"
    );
}

#[test]
fn resumes_after_a_crash_and_meta_steps_are_idempotent() {
    let mut plan = ResetPlan::new(&input(ResetReason::Auto, 0, false), &Utc);
    plan.complete(ResetStep::DeleteMedia).unwrap();
    plan.complete(ResetStep::ClearMessages).unwrap();
    // Persisted, the DO is evicted, the plan is read back.
    let stored = serde_json::to_value(&plan).unwrap();
    assert_eq!(stored["done"], json!(2));
    assert_eq!(stored["steps"][2], json!("newSessionId"));
    let mut resumed: ResetPlan = serde_json::from_value(stored).unwrap();
    assert_eq!(resumed, plan);
    assert_eq!(resumed.next_step(), Some(ResetStep::NewSessionId));

    let mut meta = SessionMeta::new("old-1".into(), "agent:main:main".into(), 5);
    meta.tokens = TokenCounts {
        input: 100,
        output: 20,
        total: 120,
        ..Default::default()
    };
    let mut want = meta.clone();
    want.session_id = "new-2".into();
    want.previous_session_ids = vec!["old-1".into()];
    want.tokens = TokenCounts::default();
    want.last_reset_at = Some(resumed.started_at_ms);
    for _ in 0..2 {
        for step in ResetStep::ALL {
            resumed.apply_to_meta(step, &mut meta);
        }
        assert_eq!(meta, want);
    }
    for step in &ResetStep::ALL[4..] {
        resumed.complete(*step).unwrap();
    }
    assert!(resumed.is_finished());
    assert_eq!(resumed.next_step(), None);
}

#[test]
fn every_plan_archives_before_clearing() {
    for reason in [ResetReason::Manual, ResetReason::Auto] {
        for count in [0, 1] {
            for extract in [false, true] {
                let steps = ResetPlan::new(&input(reason, count, extract), &Utc).steps;
                let numbers: Vec<usize> = steps.iter().map(|s| s.number()).collect();
                assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
                let clear = steps
                    .iter()
                    .position(|s| *s == ResetStep::ClearMessages)
                    .unwrap();
                let archive = steps.iter().position(|s| *s == ResetStep::ArchiveMessages);
                assert_eq!(archive.is_some_and(|a| a < clear), count > 0, "{steps:?}");
            }
        }
    }
}
