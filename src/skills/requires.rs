//! `requires` of a skill: what a host (or the gateway config) must have
//! for the skill to be offered. Parsing is fail-closed: anything we cannot
//! read becomes a problem that hides the skill (unless it is `always`).

use super::host::{CAPABILITIES, HOST_ROLES};
use serde::Serialize;
use serde_json::{Map, Value};

/// The requirement lists, as the wire (`skills.status`) shows them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requirements {
    /// Every one of these binaries on the host.
    pub bins: Vec<String>,
    /// At least one of these binaries on the host.
    pub any_bins: Vec<String>,
    /// Every one of these environment variable names set on the host.
    pub env: Vec<String>,
    /// Dotted gateway config paths that must hold a truthy value.
    pub config: Vec<String>,
    /// The host OS is one of these.
    pub os: Vec<String>,
    /// The host role is one of these.
    pub host_roles: Vec<String>,
    /// Every one of these capabilities on the host.
    pub capabilities: Vec<String>,
    /// At least one of these capabilities on the host.
    pub any_capabilities: Vec<String>,
}

/// The wire keys of `requires`, in evaluation order.
pub const FIELDS: &[&str] = &[
    "hostRoles",
    "capabilities",
    "anyCapabilities",
    "os",
    "env",
    "bins",
    "anyBins",
    "config",
];

impl Requirements {
    /// The list behind a wire key.
    pub fn field(&self, key: &str) -> &[String] {
        match key {
            "bins" => &self.bins,
            "anyBins" => &self.any_bins,
            "env" => &self.env,
            "config" => &self.config,
            "os" => &self.os,
            "hostRoles" => &self.host_roles,
            "capabilities" => &self.capabilities,
            "anyCapabilities" => &self.any_capabilities,
            _ => &[],
        }
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut Vec<String>> {
        Some(match key {
            "bins" => &mut self.bins,
            "anyBins" => &mut self.any_bins,
            "env" => &mut self.env,
            "config" => &mut self.config,
            "os" => &mut self.os,
            "hostRoles" => &mut self.host_roles,
            "capabilities" => &mut self.capabilities,
            "anyCapabilities" => &mut self.any_capabilities,
            _ => return None,
        })
    }

    /// No requirement at all.
    pub fn is_empty(&self) -> bool {
        FIELDS.iter().all(|f| self.field(f).is_empty())
    }

    /// Requirements that a connected host must meet (all but `config`).
    pub fn needs_host(&self) -> bool {
        FIELDS
            .iter()
            .any(|f| *f != "config" && !self.field(f).is_empty())
    }

    /// Reads a `requires` object (`None` or null = no requirements). Each
    /// field is a list of strings (a single string counts as a list of
    /// one). Problems — wrong types, unknown keys, unknown capability or
    /// role ids — are returned alongside, one sentence each.
    pub fn parse(value: Option<&Value>) -> (Self, Vec<String>) {
        let mut req = Self::default();
        let mut problems = Vec::new();
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, v) in map {
                    req.set_field(key, v, &mut problems);
                }
            }
            Some(_) => problems.push("requires must be a mapping of requirement lists".into()),
        }
        (req, problems)
    }

    /// `requires` with the fields present in `over` replaced (config
    /// `skills.entries.<key>.requires`: replacement per field, not merge).
    pub fn merged(frontmatter: Option<&Value>, over: Option<&Value>) -> (Self, Vec<String>) {
        let mut merged: Map<String, Value> = match frontmatter {
            Some(Value::Object(m)) => m.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(other) => return Self::parse(Some(other)),
        };
        match over {
            Some(Value::Object(o)) => {
                merged.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            None | Some(Value::Null) => {}
            Some(_) => {
                let (req, mut problems) = Self::parse(Some(&Value::Object(merged)));
                problems.push("the config override of requires must be a mapping".into());
                return (req, problems);
            }
        }
        Self::parse(Some(&Value::Object(merged)))
    }

    fn set_field(&mut self, key: &str, v: &Value, problems: &mut Vec<String>) {
        let Some(slot) = self.field_mut(key) else {
            problems.push(format!(
                "requires.{key} is not a known requirement (known: {})",
                FIELDS.join(", ")
            ));
            return;
        };
        let items: Vec<&Value> = match v {
            Value::Null => Vec::new(),
            Value::String(_) => vec![v],
            Value::Array(a) => a.iter().collect(),
            _ => {
                problems.push(format!("requires.{key} must be a list of strings"));
                return;
            }
        };
        let mut list = Vec::new();
        for item in items {
            match item.as_str().map(str::trim) {
                Some(s) if !s.is_empty() => list.push(s.to_string()),
                _ => {
                    problems.push(format!(
                        "requires.{key} has an entry that is not a name: {item}"
                    ));
                    return;
                }
            }
        }
        let known: Option<&[&str]> = match key {
            "hostRoles" => Some(HOST_ROLES),
            "capabilities" | "anyCapabilities" => Some(CAPABILITIES),
            _ => None,
        };
        if let Some(known) = known {
            for id in &list {
                if !known.contains(&id.as_str()) {
                    problems.push(format!(
                        "requires.{key}: unknown id `{id}` (known: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        if key == "os" {
            list.iter_mut().for_each(|s| s.make_ascii_lowercase());
        }
        *slot = list;
    }
}
