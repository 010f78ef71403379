//! Canonicalization, main-session detection, configuration and routing.

use super::*;
use serde_json::json;

fn cfg(main_key: &str, scope: DmScope) -> RoutingConfig {
    RoutingConfig {
        main_key: main_key.into(),
        dm_scope: scope,
        ..RoutingConfig::default()
    }
}

#[test]
fn routing_config_defaults() {
    let want = RoutingConfig {
        main_key: "main".into(),
        dm_scope: DmScope::Main,
        identity_links: vec![],
        bindings: vec![],
        agents: vec![],
        default_agent_id: "main".into(),
        owner_identities: vec![],
        share_main_with: vec![],
    };
    assert_eq!(RoutingConfig::default(), want);
    assert_eq!(RoutingConfig::from_config(&Config::default()), want);
}

#[test]
fn routing_config_from_config() {
    let config = Config::from_overrides(json!({
        "session": {
            "mainKey": "Home",
            "dmScope": "per-channel-peer",
            "identityLinks": {"steve": ["+31628552611", "telegram:1"]},
            "shareMainWith": ["discord:7"]
        },
        "owner": {"identities": ["steve", " "]},
        "agents": {
            "list": [{"id": "main"}, {"id": "Work", "default": true}],
            "bindings": [{"agentId": "main", "match": {"channel": "whatsapp"}}, {"bad": 1}]
        }
    }));
    assert_eq!(
        RoutingConfig::from_config(&config),
        RoutingConfig {
            main_key: "home".into(),
            dm_scope: DmScope::PerChannelPeer,
            identity_links: vec![IdentityLink {
                canonical: "steve".into(),
                ids: vec!["+31628552611".into(), "telegram:1".into()],
            }],
            bindings: vec![AgentBinding {
                agent_id: "main".into(),
                channel: Some("whatsapp".into()),
                account_id: None,
                peer_kind: None,
                peer_id: None,
            }],
            agents: vec![
                AgentEntry {
                    id: "main".into(),
                    default: false
                },
                AgentEntry {
                    id: "work".into(),
                    default: true
                },
            ],
            default_agent_id: "work".into(),
            owner_identities: vec!["steve".into()],
            share_main_with: vec!["discord:7".into()],
        }
    );
    let odd = RoutingConfig::from_value(&json!({"session": {"dmScope": "sideways", "mainKey": 3}}));
    assert_eq!(odd, RoutingConfig::default());
}

#[test]
fn dm_scope_spellings() {
    for scope in DmScope::ALL {
        assert_eq!(DmScope::parse(scope.as_str()), Some(scope));
    }
    assert_eq!(DmScope::parse("per-group"), None);
}

#[test]
fn simple_aliases() {
    let c = cfg("home", DmScope::Main);
    assert_eq!(canonicalize_session_key("main", &c), "agent:main:home");
    assert_eq!(canonicalize_session_key("MAIN", &c), "agent:main:home");
    assert_eq!(canonicalize_session_key(" home ", &c), "agent:main:home");
    assert_eq!(canonicalize_session_key("", &c), "agent:main:home");
    assert_eq!(canonicalize_session_key("scratch", &c), "scratch");
    let mut work_default = cfg("main", DmScope::Main);
    work_default.default_agent_id = "work".into();
    assert_eq!(
        canonicalize_session_key("main", &work_default),
        "agent:work:main"
    );
}

#[test]
fn main_key_aliasing() {
    let c = cfg("home", DmScope::PerPeer);
    assert_eq!(
        canonicalize_session_key("agent:main:main", &c),
        "agent:main:home"
    );
    assert_eq!(
        canonicalize_session_key("agent:Work:HOME", &c),
        "agent:work:home"
    );
    assert_eq!(
        canonicalize_session_key("agent:work:other", &c),
        "agent:work:other"
    );
}

#[test]
fn dm_scope_collapsing() {
    // The CLI and web defaults of v1 land in the main session under `main`.
    let main = cfg("main", DmScope::Main);
    assert_eq!(
        canonicalize_session_key("agent:main:cli:dm:main", &main),
        "agent:main:main"
    );
    assert_eq!(
        canonicalize_session_key("agent:main:web:dm:local", &main),
        "agent:main:main"
    );
    // Another person's DM keeps a session of its own (per channel and
    // peer); the owner's own identities and those the owner shares main
    // with collapse.
    assert_eq!(
        canonicalize_session_key("agent:main:whatsapp:bot:dm:+316", &main),
        "agent:main:whatsapp:dm:+316"
    );
    assert_eq!(
        canonicalize_session_key("agent:main:dm:steve", &main),
        "agent:main:dm:steve"
    );
    let owned = RoutingConfig {
        owner_identities: vec!["+316".into(), "discord:81".into(), "steve".into()],
        share_main_with: vec!["telegram:5".into()],
        identity_links: vec![IdentityLink {
            canonical: "steve".into(),
            ids: vec!["slack:U1".into()],
        }],
        ..main
    };
    for key in [
        "agent:main:whatsapp:bot:dm:+316",
        "agent:main:discord:dm:81",
        "agent:main:dm:steve",
        "agent:main:slack:dm:U1",
        "agent:main:telegram:dm:5",
    ] {
        assert_eq!(
            canonicalize_session_key(key, &owned),
            "agent:main:main",
            "{key}"
        );
    }
    assert_eq!(
        canonicalize_session_key("agent:main:discord:dm:82", &owned),
        "agent:main:discord:dm:82"
    );
    // Re-keyed for the other scopes.
    let key = "agent:Main:WhatsApp:Bot1:dm:31628552611:3@s.whatsapp.net";
    for (scope, want) in [
        (
            DmScope::PerPeer,
            "agent:main:dm:31628552611_3@s.whatsapp.net",
        ),
        (
            DmScope::PerChannelPeer,
            "agent:main:whatsapp:dm:31628552611_3@s.whatsapp.net",
        ),
        (
            DmScope::PerAccountChannelPeer,
            "agent:main:whatsapp:bot1:dm:31628552611_3@s.whatsapp.net",
        ),
    ] {
        assert_eq!(canonicalize_session_key(key, &cfg("main", scope)), want);
    }
    // A per-peer key has no channel: `unknown` fills in.
    assert_eq!(
        canonicalize_session_key("agent:main:dm:steve", &cfg("main", DmScope::PerChannelPeer)),
        "agent:main:unknown:dm:steve"
    );
}

#[test]
fn non_dm_keys_are_only_normalized() {
    for scope in DmScope::ALL {
        let c = cfg("main", scope);
        assert_eq!(
            canonicalize_session_key("agent:main:Discord:Group:123 456", &c),
            "agent:main:discord:group:123_456"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:heartbeat:system:internal", &c),
            "agent:main:heartbeat:system:internal"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:cron:job-1", &c),
            "agent:main:cron:job-1"
        );
    }
}

#[test]
fn main_session_detection() {
    let main = cfg("main", DmScope::Main);
    assert!(is_main_session_key("main", &main));
    assert!(is_main_session_key("agent:work:main", &main));
    assert!(is_main_session_key("agent:main:cli:dm:main", &main));
    assert!(!is_main_session_key("agent:main:discord:group:1", &main));
    assert!(!is_main_session_key(
        "agent:main:heartbeat:system:internal",
        &main
    ));
    assert!(!is_main_session_key("agent:main:cron:j1", &main));
    assert!(!is_main_session_key("scratch", &main));
    let per_peer = cfg("home", DmScope::PerPeer);
    assert!(is_main_session_key("agent:main:main", &per_peer));
    assert!(is_main_session_key("home", &per_peer));
    assert!(!is_main_session_key("agent:main:cli:dm:main", &per_peer));
}

#[test]
fn agent_ids() {
    assert_eq!(agent_id_of("agent:work:main"), "work");
    assert_eq!(agent_id_of("agent:Work Bot:x:dm:y"), "work-bot");
    assert_eq!(agent_id_of("agent:main"), "main");
    assert_eq!(agent_id_of("scratch"), "main");
}

fn routed(c: &RoutingConfig, channel: &str, account: Option<&str>, kind: &str, id: &str) -> Route {
    resolve_route(
        c,
        &Inbound {
            channel,
            account_id: account,
            peer_kind: kind,
            peer_id: id,
        },
    )
}

#[test]
fn routes_with_identity_links_and_bindings() {
    let c = RoutingConfig::from_value(&json!({
        "session": {
            "dmScope": "per-peer",
            "identityLinks": {"steve": ["+31628552611", "telegram:123456789"]}
        },
        "agents": {"bindings": [{"agentId": "family", "match": {"peer": {"kind": "group"}}}]}
    }));
    // The same person on two channels shares one per-peer session.
    let whatsapp = routed(&c, "whatsapp", None, "dm", "31628552611@s.whatsapp.net");
    let telegram = routed(&c, "telegram", None, "dm", "123456789");
    let want = Route {
        agent_id: "main".into(),
        session_key: "agent:main:dm:steve".into(),
        main_session_key: "agent:main:main".into(),
        linked_identity: Some("steve".into()),
        binding: None,
        from_owner: false,
    };
    assert_eq!(whatsapp, want);
    assert_eq!(telegram, want);
    assert_eq!(
        routed(&c, "whatsapp", Some("bot"), "group", "120363@g.us"),
        Route {
            agent_id: "family".into(),
            session_key: "agent:family:whatsapp:group:120363@g.us".into(),
            main_session_key: "agent:family:main".into(),
            linked_identity: None,
            binding: Some(0),
            from_owner: false,
        }
    );
}

#[test]
fn under_main_only_the_owner_and_those_sharing_it_land_in_main() {
    let c = RoutingConfig::from_value(&json!({
        "owner": {"identities": ["discord:81", "+4915100000"]},
        "session": {"shareMainWith": ["discord:90"]}
    }));
    let route = |channel, id| {
        let r = routed(&c, channel, Some("default"), "dm", id);
        (r.session_key, r.from_owner)
    };
    assert_eq!(route("discord", "81"), ("agent:main:main".into(), true));
    assert_eq!(
        route("whatsapp", "+4915100000"),
        ("agent:main:main".into(), true)
    );
    assert_eq!(route("discord", "90"), ("agent:main:main".into(), false));
    assert_eq!(
        route("discord", "82"),
        ("agent:main:discord:dm:82".into(), false)
    );
    // The owner in a group is one voice among many: keyed by the group.
    let group = routed(&c, "discord", None, "group", "g1");
    assert_eq!(
        (group.session_key, group.from_owner),
        ("agent:main:discord:group:g1".to_string(), false)
    );
}

#[test]
fn routed_keys_are_canonical() {
    for scope in DmScope::ALL {
        let c = cfg("main", scope);
        for (channel, account, kind, id) in [
            ("WhatsApp", Some("Bot"), "dm", "3162:1@s.whatsapp.net"),
            ("dm", Some("dm"), "dm", "dm"),
            ("discord", None, "thread", "a:b"),
            ("", None, "", ""),
        ] {
            let r = routed(&c, channel, account, kind, id);
            assert_eq!(canonicalize_session_key(&r.session_key, &c), r.session_key);
        }
    }
}
