//! Properties: canonicalization is idempotent, parse(build(x)) round-trips,
//! and no input panics.

use super::normalize::*;
use super::*;
use proptest::prelude::*;

/// Components that like to collide with the key syntax.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 :_@.+-]{0,12}",
        Just("dm".to_string()),
        Just(" DM ".to_string()),
        Just("-dm-".to_string()),
        Just("main".to_string()),
        Just(String::new()),
        any::<String>(),
    ]
}

fn scope() -> impl Strategy<Value = DmScope> {
    prop_oneof![
        Just(DmScope::Main),
        Just(DmScope::PerPeer),
        Just(DmScope::PerChannelPeer),
        Just(DmScope::PerAccountChannelPeer),
    ]
}

/// Keys that look structured, built from colliding components.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(component(), 0..7).prop_map(|parts| {
            let mut key = "agent".to_string();
            for p in parts {
                key.push(':');
                key.push_str(&p);
            }
            key
        }),
        component(),
    ]
}

fn config(main_key: String, scope: DmScope) -> RoutingConfig {
    RoutingConfig {
        main_key: normalize_main_key(&main_key),
        dm_scope: scope,
        ..RoutingConfig::default()
    }
}

fn unmark(s: String) -> String {
    if s == "dm" {
        "dm_".into()
    } else {
        s
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn canonicalization_is_idempotent(k in key(), main_key in component(), scope in scope()) {
        let c = config(main_key, scope);
        let once = canonicalize_session_key(&k, &c);
        prop_assert_eq!(&canonicalize_session_key(&once, &c), &once);
        // Main-session detection agrees with the canonical form.
        prop_assert_eq!(is_main_session_key(&k, &c), is_main_session_key(&once, &c));
    }

    #[test]
    fn parse_build_round_trips(
        agent in component(), channel in component(), account in proptest::option::of(component()),
        kind in component(), peer in component(), main_key in component(), scope in scope(),
    ) {
        let parts = KeyParts {
            agent_id: &agent,
            channel: &channel,
            account_id: account.as_deref(),
            peer_kind: &kind,
            peer_id: &peer,
        };
        let key = build_session_key(&parts, scope, &main_key);
        let agent = normalize_agent_id(&agent);
        let channel = unmark(normalize_channel(&channel));
        let account = unmark(normalize_account_id(account.as_deref().unwrap_or("")));
        let kind = normalize_peer_kind(&kind);
        let peer = Peer::new(kind.clone(), normalize_peer_id(&peer));
        let want = match (kind == "dm", scope) {
            (true, DmScope::Main) => None,
            (true, DmScope::PerPeer) => Some((None, None)),
            (true, DmScope::PerChannelPeer) => Some((Some(channel), None)),
            (true, DmScope::PerAccountChannelPeer) => Some((Some(channel), Some(account))),
            (false, _) => Some((Some(channel), None)),
        };
        let want = want.map(|(channel, account_id)| ParsedSessionKey {
            agent_id: agent.clone(),
            channel,
            account_id,
            peer,
        });
        prop_assert_eq!(parse_session_key(&key), want);
        if kind == "dm" && scope == DmScope::Main {
            prop_assert_eq!(key, main_session_key(&agent, &main_key));
        }
    }

    #[test]
    fn no_input_panics(s in any::<String>(), t in any::<String>(), scope in scope()) {
        let c = config(t.clone(), scope);
        let _ = canonicalize_session_key(&s, &c);
        let _ = parse_session_key(&s);
        let _ = is_main_session_key(&s, &c);
        let _ = agent_id_of(&s);
        let _ = normalize_e164(&s);
        let _ = resolve_route(&c, &Inbound { channel: &s, account_id: Some(&t), peer_kind: &t, peer_id: &s });
        for f in [normalize_agent_id, normalize_account_id, normalize_main_key, normalize_channel,
                  normalize_peer_kind, normalize_peer_id] {
            let n = f(&s);
            prop_assert!(!n.is_empty() && !n.contains(':'));
            prop_assert_eq!(f(&n), n.clone());
        }
        let id = normalize_agent_id(&s);
        prop_assert!(id.len() <= 64 && id.as_bytes()[0].is_ascii_alphanumeric() && !id.ends_with('-'));
    }
}
