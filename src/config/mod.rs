//! The gateway configuration: defaults, stored overrides, dotted-path reads
//! and writes, validation and secret masking. Pure: the Gateway DO persists
//! `overrides` as one JSON document and calls into this.

mod defaults;
pub mod schema;

pub use defaults::{default_config, DEFAULT_SYSTEM_PROMPT};

use serde_json::{Map, Value};

/// What a masked secret reads as (defined with the wire types, so the web
/// UI knows it too).
pub const MASK: &str = gsv_protocol::SECRET_MASK;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    overrides: Value,
    effective: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::from_overrides(Value::Object(Map::new()))
    }
}

impl Config {
    pub fn from_overrides(overrides: Value) -> Self {
        let overrides = if overrides.is_object() {
            overrides
        } else {
            Value::Object(Map::new())
        };
        let mut effective = default_config();
        deep_merge(&mut effective, &overrides);
        Self {
            overrides,
            effective,
        }
    }

    /// What is stored: only the values that differ from the defaults' shape.
    pub fn overrides(&self) -> &Value {
        &self.overrides
    }

    /// Defaults merged with overrides, secrets included: for gateway use only.
    pub fn effective(&self) -> &Value {
        &self.effective
    }

    /// The raw value at a dotted path, secrets included (gateway use only).
    pub fn raw(&self, path: &str) -> Option<&Value> {
        path.split('.')
            .try_fold(&self.effective, |v, seg| v.get(seg))
    }

    pub fn str_at(&self, path: &str) -> Option<&str> {
        self.raw(path).and_then(Value::as_str)
    }

    pub fn u64_at(&self, path: &str) -> Option<u64> {
        self.raw(path).and_then(Value::as_u64)
    }

    /// The whole config as a client may see it: every secret masked.
    pub fn masked(&self) -> Value {
        let mut v = self.effective.clone();
        mask_secrets(&mut v, &mut Vec::new());
        v
    }

    /// The value at a dotted path as a client may see it (masked by path
    /// too, so `apiKeys.openai` never reveals the key). `None` if unset.
    pub fn get_masked(&self, path: &str) -> Result<Option<Value>, ConfigError> {
        let segments = split_path(path)?;
        let Some(raw) = self.raw(path) else {
            return Ok(None);
        };
        let mut v = raw.clone();
        let mut prefix: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        if is_secret_path(&prefix) {
            return Ok(Some(mask_value(&v)));
        }
        mask_secrets(&mut v, &mut prefix);
        Ok(Some(v))
    }

    /// Validates and stores `value` at `path` (`null` removes the override).
    pub fn set(&mut self, path: &str, value: Value) -> Result<(), ConfigError> {
        let segments = split_path(path)?;
        if segments == ["auth", "token"] || segments.first() == Some(&"auth") {
            return Err(ConfigError(
                "auth.token is not stored in the config: set the GSV_AUTH_TOKEN secret \
                 (`wrangler secret put GSV_AUTH_TOKEN`, or .dev.vars locally)"
                    .into(),
            ));
        }
        let Some(ty) = schema::lookup(&segments) else {
            return Err(ConfigError(format!("{path} is not a known setting")));
        };
        if !value.is_null() {
            schema::check(path, ty, &value).map_err(|e| ConfigError(e.to_string()))?;
        }
        set_path(&mut self.overrides, &segments, value);
        *self = Self::from_overrides(std::mem::take(&mut self.overrides));
        Ok(())
    }
}

fn split_path(path: &str) -> Result<Vec<&str>, ConfigError> {
    let segments: Vec<&str> = path.split('.').collect();
    if path.is_empty() || segments.iter().any(|s| s.is_empty()) {
        return Err(ConfigError(format!(
            "invalid config path {path:?}: use dotted keys like model.id"
        )));
    }
    Ok(segments)
}

/// Objects merge recursively; arrays and scalars replace.
fn deep_merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn set_path(root: &mut Value, segments: &[&str], value: Value) {
    if let Value::Object(obj) = root {
        set_in(obj, segments, value);
        return;
    }
    let mut obj = Map::new();
    set_in(&mut obj, segments, value);
    *root = Value::Object(obj);
}

/// Sets (or, for null, removes) the value at `segments` under `obj`,
/// replacing whatever is in the way by objects.
fn set_in(obj: &mut Map<String, Value>, segments: &[&str], value: Value) {
    match segments {
        [] => {}
        [last] if value.is_null() => {
            obj.remove(*last);
        }
        [last] => {
            obj.insert(last.to_string(), value);
        }
        [first, rest @ ..] => {
            let slot = obj.entry(first.to_string()).or_insert(Value::Null);
            if let Value::Object(child) = slot {
                set_in(child, rest, value);
                return;
            }
            let mut child = Map::new();
            set_in(&mut child, rest, value);
            *slot = Value::Object(child);
        }
    }
}

/// A path holds a secret when it is under `apiKeys`, or its last key names a
/// token, secret, password or API key (`botToken`, `GITHUB_TOKEN`; not
/// token counts like `reserveTokens`).
fn is_secret_path(path: &[String]) -> bool {
    if path.len() >= 2 && path[0] == "apiKeys" {
        return true;
    }
    path.last().is_some_and(|k| {
        let k = k.to_ascii_lowercase();
        ["token", "secret", "password", "apikey", "api_key"]
            .iter()
            .any(|s| k.ends_with(s))
    })
}

fn mask_value(v: &Value) -> Value {
    match v {
        Value::String(s) if s.is_empty() => Value::String(String::new()),
        Value::Null => Value::Null,
        _ => Value::String(MASK.into()),
    }
}

fn mask_secrets(v: &mut Value, path: &mut Vec<String>) {
    if let Value::Object(map) = v {
        for (k, child) in map.iter_mut() {
            path.push(k.clone());
            if is_secret_path(path) && !child.is_object() {
                *child = mask_value(child);
            } else {
                mask_secrets(child, path);
            }
            path.pop();
        }
    }
}

#[cfg(test)]
mod tests;
