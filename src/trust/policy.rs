//! `tools.policy.{owner,approved,group}`: `allow`, `ask` and `deny`
//! lists of tool-name patterns (`*` matches any run of characters), the
//! built-in defaults overridden by the config, then by the agent's own
//! `agents.list[].tools.policy`, list by list. A deny beats an ask, an
//! ask beats an allow; a tool none names is refused. An `ask` tool is
//! offered, and each call waits for the owner's decision.

use crate::config::Config;
use gsv_protocol::TrustLevel;
use serde_json::Value;

/// The rules one level is decided by, with where each list came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    pub level: TrustLevel,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// The config path each list was read at (`tools.policy.group.allow`,
    /// or the agent's `agents.list[main].tools.policy.group.allow`).
    pub allow_from: String,
    pub ask_from: String,
    pub deny_from: String,
}

/// A tool's fate under a policy, and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Offered to the model (an `ask` tool too).
    pub allowed: bool,
    /// Each call waits for the owner's approval.
    pub ask: bool,
    pub rule: String,
}

impl ToolPolicy {
    /// The policy of `level` (`system` turns are decided at the level
    /// they act as) for `agent_id`.
    pub fn for_level(config: &Config, agent_id: &str, level: TrustLevel) -> Self {
        let key = policy_key(level);
        let base = format!("tools.policy.{key}");
        let global = config.raw(&base);
        let agent = agent_policy(config, agent_id, key);
        let pick = |list: &str| -> (Vec<String>, String) {
            match agent.and_then(|a| a.get(list)).and_then(strings) {
                Some(v) => (
                    v,
                    format!("agents.list[{agent_id}].tools.policy.{key}.{list}"),
                ),
                None => (
                    global
                        .and_then(|g| g.get(list))
                        .and_then(strings)
                        .unwrap_or_default(),
                    format!("{base}.{list}"),
                ),
            }
        };
        let (allow, allow_from) = pick("allow");
        let (ask, ask_from) = pick("ask");
        let (deny, deny_from) = pick("deny");
        Self {
            level,
            allow,
            ask,
            deny,
            allow_from,
            ask_from,
            deny_from,
        }
    }

    pub fn decide(&self, tool: &str) -> Decision {
        let found = |list: &[String]| list.iter().find(|p| matches(p, tool)).cloned();
        if let Some(p) = found(&self.deny) {
            return Decision {
                allowed: false,
                ask: false,
                rule: format!("{}: {p}", self.deny_from),
            };
        }
        if let Some(p) = found(&self.ask) {
            return Decision {
                allowed: true,
                ask: true,
                rule: format!("{}: {p}", self.ask_from),
            };
        }
        match found(&self.allow) {
            Some(p) => Decision {
                allowed: true,
                ask: false,
                rule: format!("{}: {p}", self.allow_from),
            },
            None => Decision {
                allowed: false,
                ask: false,
                rule: format!("not in {}", self.allow_from),
            },
        }
    }

    pub fn allows(&self, tool: &str) -> bool {
        self.decide(tool).allowed
    }
}

fn policy_key(level: TrustLevel) -> &'static str {
    match level {
        TrustLevel::Owner | TrustLevel::System => "owner",
        TrustLevel::Approved => "approved",
        TrustLevel::Group => "group",
    }
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

/// `agents.list[i].tools.policy.<key>` of the agent with this id.
fn agent_policy<'a>(config: &'a Config, agent_id: &str, key: &str) -> Option<&'a Value> {
    config
        .raw("agents.list")?
        .as_array()?
        .iter()
        .find(|a| a.get("id").and_then(Value::as_str) == Some(agent_id))?
        .get("tools")?
        .get("policy")?
        .get(key)
}

/// Whether `name` matches `pattern`, where `*` stands for any run of
/// characters (none included); case-sensitive, as tool names are.
pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}
