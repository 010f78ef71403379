//! The memory store over `MemoryStore`: URIs, the write order and its
//! failure table (a write stopped after each step, then the repair job),
//! visibility, deletes, the outbox consumer and tenant isolation.

use super::access::RequestContext;
use super::fs::{ContextFs, Level, NodeWrite, WriteStep};
use super::node::*;
use super::outbox::{backoff_ms, Consumer, IndexSink, Processed};
use super::repair::{repair_account, NodeState, RepairReport};
use super::uri::*;
use super::{MemoryEnv, MemoryError};
use crate::storage::{MemoryStore, ObjectStore};
use futures::executor::block_on;
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

struct Env {
    now: Cell<i64>,
    ids: Cell<u32>,
}

impl Env {
    fn new() -> Self {
        Self {
            // 2025-03-17T10:00:00Z
            now: Cell::new(1_742_205_600_000),
            ids: Cell::new(0),
        }
    }
}

impl MemoryEnv for Env {
    fn now_ms(&self) -> i64 {
        self.now.get()
    }
    fn new_id(&self) -> String {
        self.ids.set(self.ids.get() + 1);
        format!("00000000-0000-4000-8000-{:012}", self.ids.get())
    }
}

fn alice(slug: &str) -> NodeUri {
    NodeUri::memory(
        "acme",
        Space::User("alice".into()),
        Category::Preferences,
        slug,
    )
    .unwrap()
}

fn coffee() -> NodeWrite {
    NodeWrite {
        uri: alice("coffee"),
        content: "# Coffee\n\nAlice drinks her coffee black, no sugar.\n\nShe dislikes lattes."
            .into(),
        abstract_text: "Alice drinks black coffee".into(),
        overview: "- coffee: black\n- dislikes: lattes".into(),
        relations: vec![RelationEdge {
            from_uri: "ctx://acme/users/alice/memories/preferences/coffee".into(),
            to_uri: "ctx://acme/users/alice/memories/entities/corner_cafe".into(),
            relation_type: "related_to".into(),
            weight: 0.5,
            reason: "where she buys it".into(),
        }],
        tags: vec!["drinks".into()],
    }
}

fn acme() -> RequestContext {
    RequestContext::new("acme")
}

fn keys_under(store: &MemoryStore, uri: &NodeUri) -> Vec<String> {
    let prefix = uri.prefix();
    store
        .keys()
        .into_iter()
        .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

#[test]
fn uris_parse_print_and_map_to_their_directories() {
    let uri = NodeUri::parse("ctx://acme/users/alice/memories/profile/job").unwrap();
    assert_eq!(
        uri,
        NodeUri {
            account: "acme".into(),
            space: Space::User("alice".into()),
            kind: NodeKind::Memory {
                category: Category::Profile,
                slug: "job".into()
            }
        }
    );
    assert_eq!(
        uri.prefix(),
        "accounts/acme/users/alice/memories/profile/job/"
    );
    assert_eq!(uri.space.owner(), "user:alice");
    let skill = NodeUri::parse("ctx://acme/agents/main/skills/brew_coffee").unwrap();
    assert_eq!(
        skill.prefix(),
        "accounts/acme/agents/main/skills/brew_coffee/"
    );
    assert_eq!(skill.category(), Category::Skills);
    assert_eq!(
        NodeUri::from_key("accounts/acme/agents/main/skills/brew_coffee/.outbox/x.json").unwrap(),
        skill
    );
    assert_eq!(
        NodeUri::from_key("accounts/acme/users/+4915100000/memories/events/e1/content.md")
            .unwrap()
            .to_string(),
        "ctx://acme/users/+4915100000/memories/events/e1"
    );
}

#[test]
fn bad_uris_are_refused_with_the_reason() {
    let cases = [
        ("http://acme/users/a/memories/profile/x", "not a ctx:// URI: \"http://acme/users/a/memories/profile/x\""),
        ("ctx://acme/users/a/memories/profile/..", "invalid slug \"..\": use letters, digits and - _ . (ids may also hold + : @), not . or .. alone, at most 96 characters"),
        ("ctx://acme/users/../memories/profile/x", "invalid user \"..\": use letters, digits and - _ . (ids may also hold + : @), not . or .. alone, at most 128 characters"),
        ("ctx://acme/users/a/memories/moods/x", "unknown category \"moods\": one of profile, preferences, entities, events, cases, patterns, skills"),
        ("ctx://acme/users/a/skills/x", "skills belong to agents, not users: \"ctx://acme/users/a/skills/x\""),
        ("ctx://acme/users/a/memories/profile/x/y", "\"ctx://acme/users/a/memories/profile/x/y\" is not ctx://ACCOUNT/users/USER/memories/CATEGORY/SLUG, ctx://ACCOUNT/agents/AGENT/memories/CATEGORY/SLUG or ctx://ACCOUNT/agents/AGENT/skills/NAME"),
        ("ctx://acme/users/a/memories/profile/", "invalid slug \"\": use letters, digits and - _ . (ids may also hold + : @), not . or .. alone, at most 96 characters"),
        ("ctx://acme/users/a/memories/profile/.meta.json", "invalid slug \".meta.json\": use letters, digits and - _ . (ids may also hold + : @), not . or .. alone, at most 96 characters"),
    ];
    for (uri, message) in cases {
        assert_eq!(
            NodeUri::parse(uri).unwrap_err().to_string(),
            message,
            "{uri}"
        );
    }
    let long = "x".repeat(MAX_SLUG + 1);
    assert!(NodeUri::parse(&format!("ctx://acme/agents/main/memories/cases/{long}")).is_err());
}

#[test]
fn slugs_are_made_from_titles() {
    assert_eq!(
        slugify("Coffee preferences!").as_deref(),
        Some("coffee_preferences")
    );
    assert_eq!(
        slugify("  Event: 2025-03-17 (abc)").as_deref(),
        Some("event_2025_03_17_abc")
    );
    assert_eq!(slugify("!!!"), None);
    assert_eq!(
        slugify(&"ab ".repeat(100)).map(|s| s.len()),
        Some(MAX_SLUG - 1)
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9+:@_-][A-Za-z0-9+:@._-]{0,20}"
    }

    proptest! {
        #[test]
        fn uri_and_key_round_trip(account in id(), user in id(), agent in id(), in_user in any::<bool>(),
                                  category in 0usize..7, slug in "[a-z0-9_-][a-z0-9_.-]{0,30}", skill in any::<bool>()) {
            let space = match in_user { true => Space::User(user), false => Space::Agent(agent) };
            let kind = match (skill, &space) {
                (true, Space::Agent(_)) => NodeKind::Skill { name: slug },
                _ => NodeKind::Memory { category: Category::ALL[category], slug },
            };
            let uri = NodeUri { account, space, kind };
            prop_assert_eq!(NodeUri::parse(&uri.to_string()), Ok(uri.clone()));
            prop_assert_eq!(NodeUri::from_key(&uri.key(META)), Ok(uri.clone()));
            prop_assert!(uri.prefix().starts_with(&account_prefix(&uri.account)));
        }
    }
}

#[test]
fn a_write_lays_out_the_node_and_its_event_as_the_spec_says() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    let (meta, event_key) = block_on(fs.write(&acme(), &coffee())).unwrap();
    assert_eq!(
        keys_under(&store, &alice("coffee")),
        [
            ".abstract.md",
            ".meta.json",
            ".outbox/00000000-0000-4000-8000-000000000001.json",
            ".overview.md",
            ".relations.json",
            "content.md"
        ]
    );
    assert_eq!(
        event_key,
        "accounts/acme/users/alice/memories/preferences/coffee/.outbox/00000000-0000-4000-8000-000000000001.json"
    );
    let meta_json: serde_json::Value =
        serde_json::from_str(&store.text(&alice("coffee").key(META)).unwrap()).unwrap();
    assert_eq!(
        meta_json,
        json!({
            "uri": "ctx://acme/users/alice/memories/preferences/coffee",
            "context_type": "MEMORY",
            "category": "preferences",
            "level": 3,
            "owner_space": "user:alice",
            "status": "ACTIVE",
            "created_at": "2025-03-17T10:00:00Z",
            "updated_at": "2025-03-17T10:00:00Z",
            "version": 1,
            "tags": ["drinks"]
        })
    );
    assert_eq!(meta.status, NodeStatus::Active);
    let event: serde_json::Value = serde_json::from_str(&store.text(&event_key).unwrap()).unwrap();
    let record = |level: u8, text: &str| {
        json!({
            "id": record_id("ctx://acme/users/alice/memories/preferences/coffee", level),
            "uri": "ctx://acme/users/alice/memories/preferences/coffee",
            "level": level,
            "text": text,
            "filters": {"account_id": "acme", "owner_space": "user:alice"},
            "metadata": {"category": "preferences", "context_type": "MEMORY"}
        })
    };
    assert_eq!(
        event,
        json!({
            "event_id": "00000000-0000-4000-8000-000000000001",
            "event_type": "UPSERT_CONTEXT",
            "uri": "ctx://acme/users/alice/memories/preferences/coffee",
            "payload": {"records": [
                record(0, "Alice drinks black coffee"),
                record(1, "- coffee: black\n- dislikes: lattes"),
                record(2, &coffee().content),
            ]},
            "status": "PENDING",
            "retry_count": 0,
            "created_at": "2025-03-17T10:00:00Z"
        })
    );
    let relations: serde_json::Value =
        serde_json::from_str(&store.text(&alice("coffee").key(RELATIONS)).unwrap()).unwrap();
    assert_eq!(
        relations,
        json!([{
            "from_uri": "ctx://acme/users/alice/memories/preferences/coffee",
            "to_uri": "ctx://acme/users/alice/memories/entities/corner_cafe",
            "relation_type": "related_to",
            "weight": 0.5,
            "reason": "where she buys it"
        }])
    );
}

#[test]
fn an_update_bumps_the_version_and_keeps_the_creation_time() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    block_on(fs.write(&acme(), &coffee())).unwrap();
    env.now.set(env.now.get() + 3_600_000);
    let mut w = coffee();
    w.abstract_text = "Alice now takes oat milk in her coffee".into();
    let (meta, _) = block_on(fs.write(&acme(), &w)).unwrap();
    assert_eq!(
        (
            meta.version,
            meta.created_at.as_str(),
            meta.updated_at.as_str()
        ),
        (2, "2025-03-17T10:00:00Z", "2025-03-17T11:00:00Z")
    );
    let view = block_on(fs.get(&acme(), &alice("coffee"), Level::Abstract))
        .unwrap()
        .unwrap();
    assert_eq!(view.text, "Alice now takes oat milk in her coffee");
}

#[test]
fn long_abstracts_are_cut_to_100_characters() {
    let text = "Alice ".repeat(40);
    let cut = clamp_abstract(&text);
    assert_eq!(cut.chars().count(), 96);
    assert!(cut.ends_with("Alice…"));
    assert_eq!(clamp_abstract("a  b\nc"), "a b c");
}

/// After a write stopped at `step` (a crash there): what the node looks
/// like to retrieval before the repair, what the repair reports, and to
/// retrieval after it.
fn stopped_then_repaired(
    step: WriteStep,
    update: bool,
) -> (bool, RepairReport, bool, Option<String>) {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    let mut w = coffee();
    if update {
        block_on(fs.write(&acme(), &w)).unwrap();
        // The first write's event was consumed.
        for key in store.keys().into_iter().filter(|k| k.contains("/.outbox/")) {
            block_on(store.remove(&key)).unwrap();
        }
        w.abstract_text = "Alice switched to tea".into();
    }
    fs.stop_after(step);
    assert_eq!(
        block_on(fs.write(&acme(), &w)).unwrap_err(),
        MemoryError::Stopped(step)
    );
    let visible_before = block_on(fs.exists(&acme(), &w.uri)).unwrap();
    let report = block_on(repair_account(&fs, &acme())).unwrap();
    let visible_after = block_on(fs.exists(&acme(), &w.uri)).unwrap();
    let abstract_after = block_on(fs.get(&acme(), &w.uri, Level::Abstract))
        .unwrap()
        .map(|v| v.text);
    (visible_before, report, visible_after, abstract_after)
}

fn report(f: impl FnOnce(&mut RepairReport)) -> RepairReport {
    let mut r = RepairReport {
        nodes_scanned: 1,
        list_pages: 1,
        ..Default::default()
    };
    f(&mut r);
    r
}

const URI: &str = "ctx://acme/users/alice/memories/preferences/coffee";

/// The scan's statuses: the coffee node in `state`.
fn coffee_is(state: NodeState) -> BTreeMap<String, NodeState> {
    BTreeMap::from([(URI.to_string(), state)])
}
const EVENT_1: &str = "accounts/acme/users/alice/memories/preferences/coffee/.outbox/00000000-0000-4000-8000-000000000001.json";
const EVENT_2: &str = "accounts/acme/users/alice/memories/preferences/coffee/.outbox/00000000-0000-4000-8000-000000000002.json";

#[test]
fn stopped_after_content_the_repair_recreates_the_node_from_it() {
    assert_eq!(
        stopped_then_repaired(WriteStep::Content, false),
        (
            false,
            report(|r| {
                r.recreated = vec![URI.into()];
                r.pending_events = vec![EVENT_1.into()];
                r.states = coffee_is(NodeState::active());
            }),
            true,
            // Made from the content's first line: no abstract was written.
            Some("Coffee".into())
        )
    );
}

#[test]
fn stopped_after_relations_the_repair_completes_the_node() {
    assert_eq!(
        stopped_then_repaired(WriteStep::Relations, false),
        (
            false,
            report(|r| {
                r.recreated = vec![URI.into()];
                r.pending_events = vec![EVENT_1.into()];
                r.states = coffee_is(NodeState::active());
            }),
            true,
            Some("Coffee".into())
        )
    );
}

#[test]
fn stopped_after_the_layers_the_pending_node_is_activated() {
    let (before, report_, after, abstract_) = stopped_then_repaired(WriteStep::Layers, false);
    assert_eq!(
        (before, report_, after, abstract_),
        (
            false,
            report(|r| {
                r.activated = vec![URI.into()];
                r.pending_events = vec![EVENT_1.into()];
                r.states = coffee_is(NodeState::active());
            }),
            true,
            Some("Alice drinks black coffee".into())
        )
    );
}

#[test]
fn stopped_after_the_commit_the_node_is_normal_and_skipped() {
    assert_eq!(
        stopped_then_repaired(WriteStep::Commit, false),
        (
            true,
            report(|r| r.states = coffee_is(NodeState::active())),
            true,
            Some("Alice drinks black coffee".into())
        )
    );
}

#[test]
fn stopped_after_the_event_nothing_is_left_to_repair() {
    assert_eq!(
        stopped_then_repaired(WriteStep::Event, false),
        (
            true,
            report(|r| {
                r.pending_events = vec![EVENT_1.into()];
                r.states = coffee_is(NodeState::active());
            }),
            true,
            Some("Alice drinks black coffee".into())
        )
    );
}

#[test]
fn an_update_stopped_half_way_is_hidden_then_activated() {
    // The update marked the node PENDING, then wrote its new content: the
    // repair finds every file and commits what is there.
    assert_eq!(
        stopped_then_repaired(WriteStep::Content, true),
        (
            false,
            report(|r| {
                r.activated = vec![URI.into()];
                r.pending_events = vec![EVENT_2.into()];
                r.states = coffee_is(NodeState::active());
            }),
            true,
            Some("Alice drinks black coffee".into())
        )
    );
    assert!(
        !stopped_then_repaired(WriteStep::MarkPending, true).0,
        "a PENDING node is invisible"
    );
}

#[test]
fn a_pending_node_with_a_file_missing_is_marked_broken_with_an_alert() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    fs.stop_after(WriteStep::Layers);
    block_on(fs.write(&acme(), &coffee())).unwrap_err();
    block_on(store.remove(&alice("coffee").key(OVERVIEW))).unwrap();
    let r = block_on(repair_account(&fs, &acme())).unwrap();
    let broken = || {
        coffee_is(NodeState {
            status: NodeStatus::Broken,
            missing: vec![OVERVIEW.into()],
        })
    };
    assert_eq!(
        r,
        report(|r| {
            r.marked_broken = vec![URI.into()];
            r.alerts = vec![format!("{URI}: BROKEN, missing .overview.md")];
            r.states = broken();
        })
    );
    let meta = block_on(fs.raw_meta(&alice("coffee"))).unwrap().unwrap();
    assert_eq!(meta.status, NodeStatus::Broken);
    assert!(!block_on(fs.exists(&acme(), &alice("coffee"))).unwrap());
    // A BROKEN node is left for a person: a second repair changes nothing,
    // and still says what it misses.
    assert_eq!(
        block_on(repair_account(&fs, &acme())).unwrap(),
        report(|r| r.states = broken())
    );
    // The person restores the file: the next repair commits the node and
    // tells the index (an UPSERT).
    store.insert(&alice("coffee").key(OVERVIEW), "- coffee: black");
    assert_eq!(
        block_on(repair_account(&fs, &acme())).unwrap(),
        report(|r| {
            r.restored = vec![URI.into()];
            // The write was cut before its event: this is the node's first.
            r.pending_events = vec![EVENT_1.into()];
            r.states = coffee_is(NodeState::active());
        })
    );
    assert!(block_on(fs.exists(&acme(), &alice("coffee"))).unwrap());
}

#[test]
fn pending_nodes_are_never_returned() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    fs.stop_after(WriteStep::Layers);
    block_on(fs.write(&acme(), &coffee())).unwrap_err();
    assert_eq!(
        block_on(fs.raw_meta(&alice("coffee")))
            .unwrap()
            .map(|m| m.status),
        Some(NodeStatus::Pending)
    );
    assert!(!block_on(fs.exists(&acme(), &alice("coffee"))).unwrap());
    for level in [Level::Abstract, Level::Overview, Level::Content] {
        assert_eq!(
            block_on(fs.get(&acme(), &alice("coffee"), level)).unwrap(),
            None
        );
    }
}

#[test]
fn a_delete_hides_the_node_and_a_cut_delete_is_finished_not_undone() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    block_on(fs.write(&acme(), &coffee())).unwrap();
    block_on(store.remove(EVENT_1)).unwrap();
    let key = block_on(fs.delete(&acme(), &alice("coffee"))).unwrap();
    assert_eq!(key.as_deref(), Some(EVENT_2));
    assert_eq!(
        keys_under(&store, &alice("coffee")),
        [".outbox/00000000-0000-4000-8000-000000000002.json"]
    );
    assert_eq!(
        block_on(fs.delete(&acme(), &alice("coffee"))).unwrap(),
        None
    );
    // A delete cut after its meta went: content is left beside the DELETE
    // event, and the repair finishes the delete instead of recreating it.
    store.insert(&alice("coffee").key(CONTENT), "leftover");
    let r = block_on(repair_account(&fs, &acme())).unwrap();
    assert_eq!(
        r,
        report(|r| {
            r.deletes_finished = vec![URI.into()];
            r.pending_events = vec![EVENT_2.into()];
        })
    );
    assert!(!block_on(fs.exists(&acme(), &alice("coffee"))).unwrap());
    assert_eq!(keys_under(&store, &alice("coffee")).len(), 1);
}

#[test]
fn another_account_is_denied_every_call() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    block_on(fs.write(&acme(), &coffee())).unwrap();
    let other = RequestContext::new("globex");
    let denied = MemoryError::Denied {
        account: "acme".into(),
    };
    let uri = alice("coffee");
    assert_eq!(block_on(fs.exists(&other, &uri)).unwrap_err(), denied);
    assert_eq!(
        block_on(fs.get(&other, &uri, Level::Content)).unwrap_err(),
        denied
    );
    assert_eq!(block_on(fs.write(&other, &coffee())).unwrap_err(), denied);
    assert_eq!(block_on(fs.delete(&other, &uri)).unwrap_err(), denied);
    assert_eq!(
        other.check_prefix("accounts/acme/users/").unwrap_err(),
        denied
    );
    assert_eq!(
        other
            .check_prefix("accounts/acme-x/")
            .unwrap_err()
            .to_string(),
        "access denied: account \"acme-x\" is not this request's account"
    );
    assert!(other.check_prefix("accounts/globex/users/").is_ok());
    // Its own repair scans only its own prefix.
    assert_eq!(
        block_on(repair_account(&fs, &other)).unwrap(),
        RepairReport {
            list_pages: 1,
            ..Default::default()
        }
    );
    assert!(block_on(fs.exists(&acme(), &uri)).unwrap());
}

/// An index that fails its first `failures` calls, then records what it
/// applied.
#[derive(Default)]
struct Sink {
    failures: Cell<u32>,
    applied: RefCell<Vec<(EventType, String)>>,
}

impl IndexSink for Sink {
    async fn apply(&self, event: &OutboxEvent, _payload: &EventPayload) -> Result<(), String> {
        if self.failures.get() > 0 {
            self.failures.set(self.failures.get() - 1);
            return Err("index unavailable".into());
        }
        self.applied
            .borrow_mut()
            .push((event.event_type, event.uri.clone()));
        Ok(())
    }
}

#[test]
fn a_consumed_event_is_applied_once_and_removed_with_its_mark() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    let (_, key) = block_on(fs.write(&acme(), &coffee())).unwrap();
    let sink = Sink::default();
    let consumer = Consumer {
        fs: &fs,
        sink: &sink,
        consumer_id: "c1",
        max_retry: 5,
        now_ms: env.now_ms(),
    };
    assert_eq!(
        block_on(consumer.process(&key)).unwrap(),
        Processed::Applied
    );
    assert_eq!(block_on(consumer.process(&key)).unwrap(), Processed::Gone);
    assert_eq!(
        *sink.applied.borrow(),
        [(EventType::UpsertContext, URI.to_string())]
    );
    assert!(keys_under(&store, &alice("coffee"))
        .iter()
        .all(|k| !k.starts_with(".outbox/")));
}

#[test]
fn a_failing_event_backs_off_then_lands_in_the_dlq_with_its_retry_count() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    let (_, key) = block_on(fs.write(&acme(), &coffee())).unwrap();
    let sink = Sink {
        failures: Cell::new(99),
        ..Default::default()
    };
    let mut now = env.now_ms();
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        let consumer = Consumer {
            fs: &fs,
            sink: &sink,
            consumer_id: "c1",
            max_retry: 3,
            now_ms: now,
        };
        let outcome = block_on(consumer.process(&key)).unwrap();
        if let Processed::Retry { at_ms, .. } = outcome {
            // Too early: not tried.
            let early = Consumer {
                now_ms: at_ms - 1,
                ..consumer
            };
            assert_eq!(
                block_on(early.process(&key)).unwrap(),
                Processed::NotDue { at_ms }
            );
            now = at_ms;
        }
        outcomes.push(outcome);
    }
    let t0 = env.now_ms();
    assert_eq!(
        outcomes,
        [
            Processed::Retry {
                at_ms: t0 + 1_000,
                retry_count: 1
            },
            Processed::Retry {
                at_ms: t0 + 3_000,
                retry_count: 2
            },
            Processed::DeadLettered { retry_count: 3 },
            Processed::Gone,
            Processed::Gone,
        ]
    );
    let dlq = key.replace("/.outbox/", "/.outbox/dlq/");
    let event: serde_json::Value = serde_json::from_str(&store.text(&dlq).unwrap()).unwrap();
    assert_eq!(
        (
            &event["status"],
            &event["retry_count"],
            &event["last_error"]
        ),
        (&json!("FAILED"), &json!(3), &json!("index unavailable"))
    );
    assert!(store.text(&key).is_none());
    assert!(sink.applied.borrow().is_empty());
    assert_eq!(
        [1, 2, 3, 4, 30].map(backoff_ms),
        [1_000, 2_000, 4_000, 8_000, 600_000]
    );
}

#[test]
fn a_claimed_event_is_left_to_its_consumer_until_the_lease_runs_out() {
    let (store, env) = (MemoryStore::new(), Env::new());
    let fs = ContextFs::new(&store, &env);
    let (_, key) = block_on(fs.write(&acme(), &coffee())).unwrap();
    let mark = key.replace(".json", ".processing");
    store.insert(
        &mark,
        &json!({"consumer": "c0", "claimed_ms": env.now_ms()}).to_string(),
    );
    let sink = Sink::default();
    let at = |now_ms| Consumer {
        fs: &fs,
        sink: &sink,
        consumer_id: "c1",
        max_retry: 5,
        now_ms,
    };
    assert_eq!(
        block_on(at(env.now_ms() + 1_000).process(&key)).unwrap(),
        Processed::Claimed
    );
    assert!(sink.applied.borrow().is_empty());
    assert_eq!(
        block_on(at(env.now_ms() + 60_000).process(&key)).unwrap(),
        Processed::Applied
    );
    assert!(store.text(&mark).is_none());
}

#[test]
fn meta_json_has_exactly_the_specs_fields() {
    let meta = NodeMeta {
        uri: URI.into(),
        context_type: ContextType::Memory,
        category: "preferences".into(),
        level: 3,
        owner_space: "user:alice".into(),
        status: NodeStatus::Active,
        created_at: "2025-03-17T10:00:00Z".into(),
        updated_at: "2025-03-17T11:30:00Z".into(),
        version: 3,
        tags: vec!["user-profile".into(), "verified".into()],
    };
    let value = serde_json::to_value(&meta).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = [
        "uri",
        "context_type",
        "category",
        "level",
        "owner_space",
        "status",
        "created_at",
        "updated_at",
        "version",
        "tags",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    let back: NodeMeta = serde_json::from_value(value).unwrap();
    assert_eq!(back, meta);
}
