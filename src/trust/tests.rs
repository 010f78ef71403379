use super::policy::matches;
use super::*;
use crate::config::Config;
use serde_json::json;

#[test]
fn patterns_match_names_with_stars_anywhere() {
    let cases = [
        ("*", "laptop__Bash", true),
        ("*__Bash", "laptop__Bash", true),
        ("*__Bash", "laptop__BashX", false),
        ("gsv__Write*", "gsv__WriteFile", true),
        ("gsv__Write*", "gsv__ReadFile", false),
        ("gsv__Config*", "gsv__ConfigGet", true),
        ("gsv__Memory*", "gsv__MemoryWrite", true),
        ("*__*", "who_am_i", false),
        ("*__*", "gsv__Cron", true),
        ("a*b*c", "abc", true),
        ("a*b*c", "axxbyyc", true),
        ("a*b*c", "acb", false),
        ("ab*ba", "aba", false),
        ("my_stats", "my_stats", true),
        ("my_stats", "my_stats2", false),
    ];
    for (pattern, name, expected) in cases {
        assert_eq!(matches(pattern, name), expected, "{pattern} vs {name}");
    }
}

fn decisions(config: &Config, level: TrustLevel, tools: &[&str]) -> Vec<(String, bool, String)> {
    let policy = ToolPolicy::for_level(config, "main", level);
    tools
        .iter()
        .map(|t| {
            let d = policy.decide(t);
            (t.to_string(), d.allowed, d.rule)
        })
        .collect()
}

const TOOLS: &[&str] = &[
    "laptop__Bash",
    "gsv__WriteFile",
    "gsv__ConfigGet",
    "gsv__SessionSend",
    "gsv__Message",
    "gsv__MemoryWrite",
    "gsv__MemorySearch",
    "gsv__Cron",
    "who_am_i",
];

#[test]
fn the_defaults_give_the_owner_everything_and_others_no_node_config_or_session_tools() {
    let config = Config::default();
    let all = |rule: &str| -> Vec<(String, bool, String)> {
        TOOLS
            .iter()
            .map(|t| (t.to_string(), true, rule.to_string()))
            .collect()
    };
    assert_eq!(
        decisions(&config, TrustLevel::Owner, TOOLS),
        all("tools.policy.owner.allow: *")
    );
    // A scheduled turn is decided at the owner's rules when the owner made it.
    assert_eq!(
        decisions(&config, TrustLevel::System, TOOLS),
        all("tools.policy.owner.allow: *")
    );
    let refused = |t: &str, level: &str| {
        (
            t.to_string(),
            false,
            format!("not in tools.policy.{level}.allow"),
        )
    };
    let allowed = |t: &str, level: &str| {
        (
            t.to_string(),
            true,
            format!("tools.policy.{level}.allow: {t}"),
        )
    };
    assert_eq!(
        decisions(&config, TrustLevel::Approved, TOOLS),
        vec![
            refused("laptop__Bash", "approved"),
            refused("gsv__WriteFile", "approved"),
            refused("gsv__ConfigGet", "approved"),
            refused("gsv__SessionSend", "approved"),
            refused("gsv__Message", "approved"),
            allowed("gsv__MemoryWrite", "approved"),
            allowed("gsv__MemorySearch", "approved"),
            allowed("gsv__Cron", "approved"),
            allowed("who_am_i", "approved"),
        ]
    );
    assert_eq!(
        decisions(&config, TrustLevel::Group, TOOLS),
        vec![
            refused("laptop__Bash", "group"),
            refused("gsv__WriteFile", "group"),
            refused("gsv__ConfigGet", "group"),
            refused("gsv__SessionSend", "group"),
            refused("gsv__Message", "group"),
            refused("gsv__MemoryWrite", "group"),
            allowed("gsv__MemorySearch", "group"),
            allowed("gsv__Cron", "group"),
            allowed("who_am_i", "group"),
        ]
    );
}

#[test]
fn a_deny_beats_an_allow_and_an_agent_overrides_the_config_list_by_list() {
    let mut config = Config::default();
    config
        .set("tools.policy.approved.allow", json!(["*"]))
        .unwrap();
    config
        .set(
            "tools.policy.approved.deny",
            json!(["*__Bash", "gsv__Config*"]),
        )
        .unwrap();
    config
        .set(
            "agents.list",
            json!([{"id": "work", "tools": {"policy": {"approved": {"deny": ["*__*"]}}}}]),
        )
        .unwrap();
    let main = ToolPolicy::for_level(&config, "main", TrustLevel::Approved);
    assert_eq!(
        ["laptop__Bash", "laptop__Read", "gsv__ConfigGet"].map(|t| main.decide(t)),
        [
            Decision {
                allowed: false,
                ask: false,
                rule: "tools.policy.approved.deny: *__Bash".into()
            },
            Decision {
                allowed: true,
                ask: false,
                rule: "tools.policy.approved.allow: *".into()
            },
            Decision {
                allowed: false,
                ask: false,
                rule: "tools.policy.approved.deny: gsv__Config*".into()
            },
        ]
    );
    let work = ToolPolicy::for_level(&config, "work", TrustLevel::Approved);
    assert_eq!(
        ["laptop__Read", "who_am_i"].map(|t| work.decide(t)),
        [
            Decision {
                allowed: false,
                ask: false,
                rule: "agents.list[work].tools.policy.approved.deny: *__*".into()
            },
            Decision {
                allowed: true,
                ask: false,
                rule: "tools.policy.approved.allow: *".into()
            },
        ]
    );
}

#[test]
fn only_the_owner_and_a_person_in_their_own_session_change_it() {
    let system_as = |t| Trust::system(Trust::of(t));
    let cases = [
        (Trust::OWNER, true, true),
        (Trust::OWNER, false, true),
        (Trust::APPROVED, true, false),
        (Trust::APPROVED, false, true),
        (Trust::GROUP, false, false),
        (system_as(TrustLevel::Owner), true, true),
        (system_as(TrustLevel::Approved), false, false),
        (system_as(TrustLevel::Group), false, false),
    ];
    for (trust, is_main, expected) in cases {
        assert_eq!(
            may_change_session(trust, is_main),
            expected,
            "{trust} in main: {is_main}"
        );
    }
}

#[test]
fn trust_reads_as_its_level_and_whom_a_system_turn_acts_as() {
    assert_eq!(Trust::APPROVED.to_string(), "approved");
    assert_eq!(Trust::system(Trust::GROUP).to_string(), "system (as group)");
    assert_eq!(
        serde_json::to_value(Trust::system(Trust::OWNER)).unwrap(),
        json!({"level": "system", "actsAs": "owner"})
    );
    assert_eq!(
        serde_json::from_value::<Trust>(json!({"level": "approved", "actsAs": "approved"}))
            .unwrap(),
        Trust::APPROVED
    );
}
