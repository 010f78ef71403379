//! `session.patch`: settings merged field by field (`settings.model` too),
//! `resetPolicy` merged with its mode defaulting to `manual`, `label`
//! replaced; `null` clears. Invalid values are refused whole.

use crate::llm::ThinkingLevel;
use crate::session::meta::SessionMeta;
use crate::session::reset::ResetPolicy;
use gsv_protocol::{ModelSelection, SessionPatchParams};
use serde_json::{Map, Value};

/// Why a patch was refused; it says which field and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchError {
    SettingsNotObject,
    LabelNotString,
    ResetPolicyNotObject,
    /// The merged policy (shown as JSON) is not a valid one.
    InvalidResetPolicy(Value),
    /// `settings.model.{field}` is empty or has spaces.
    InvalidModelField(String),
    /// `settings.model.{field}` is not `provider` or `id`.
    UnknownModelField(String),
    ModelIncomplete,
    /// `settings.thinkingLevel` is not a level.
    UnknownThinkingLevel(String),
    /// A known setting given a value of the wrong kind.
    InvalidValue {
        key: String,
        value: Value,
    },
    UnknownSetting(String),
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SettingsNotObject => f.write_str("settings must be an object"),
            Self::LabelNotString => f.write_str("label must be a string"),
            Self::ResetPolicyNotObject => f.write_str("resetPolicy must be an object"),
            Self::InvalidResetPolicy(merged) => write!(f, "invalid resetPolicy {merged}: mode must be manual, daily (atHour 0–23) or idle (idleMinutes ≥ 1)"),
            Self::InvalidModelField(field) => write!(f, "settings.model.{field} must be a non-empty string without spaces"),
            Self::UnknownModelField(field) => write!(f, "settings.model.{field} is not a model field (provider, id)"),
            Self::ModelIncomplete => f.write_str("settings.model needs both provider and id"),
            Self::UnknownThinkingLevel(level) => write!(f, "settings.thinkingLevel {level:?} is not one of off, minimal, low, medium, high, xhigh"),
            Self::InvalidValue { key, value } => write!(f, "settings.{key} cannot be {value}"),
            Self::UnknownSetting(key) => write!(f, "settings.{key} is not a session setting (model, thinkingLevel, systemPrompt, maxTokens)"),
        }
    }
}

impl std::error::Error for PatchError {}

/// Applies `p` to a copy of `meta`; the caller stores it only on success.
pub fn apply_patch(meta: &SessionMeta, p: &SessionPatchParams) -> Result<SessionMeta, PatchError> {
    let mut next = meta.clone();
    if let Some(settings) = &p.settings {
        let Some(fields) = settings.as_object() else {
            return Err(PatchError::SettingsNotObject);
        };
        for (key, value) in fields {
            patch_setting(&mut next, key, value)?;
        }
    }
    match &p.label {
        None => {}
        Some(Value::Null) => next.label = None,
        Some(Value::String(s)) => next.label = Some(s.clone()).filter(|s| !s.is_empty()),
        Some(_) => return Err(PatchError::LabelNotString),
    }
    match &p.reset_policy {
        None => {}
        Some(Value::Null) => next.reset_policy = None,
        Some(Value::Object(fields)) => {
            let mut merged: Map<String, Value> = next
                .reset_policy
                .as_ref()
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            merged.extend(fields.clone());
            merged
                .entry("mode")
                .or_insert_with(|| Value::from("manual"));
            let in_range = |k: &str, lo: u64, hi: u64| {
                merged
                    .get(k)
                    .is_none_or(|v| v.as_u64().is_some_and(|n| n >= lo && n <= hi))
            };
            let valid = in_range("atHour", 0, 23) && in_range("idleMinutes", 1, u64::MAX);
            let merged = Value::Object(merged);
            let policy = ResetPolicy::from_json(&merged)
                .filter(|_| valid)
                .ok_or_else(|| PatchError::InvalidResetPolicy(merged.clone()))?;
            next.reset_policy = Some(policy.to_json());
        }
        Some(_) => return Err(PatchError::ResetPolicyNotObject),
    }
    Ok(next)
}

fn patch_setting(meta: &mut SessionMeta, key: &str, value: &Value) -> Result<(), PatchError> {
    let s = &mut meta.settings;
    match (key, value) {
        ("model", Value::Null) => s.model = None,
        ("model", Value::Object(m)) => {
            let mut model = s.model.clone().unwrap_or(ModelSelection {
                provider: String::new(),
                id: String::new(),
            });
            for (field, v) in m {
                let text = v
                    .as_str()
                    .filter(|t| !t.trim().is_empty() && !t.contains(char::is_whitespace));
                let text = text.ok_or_else(|| PatchError::InvalidModelField(field.clone()))?;
                match field.as_str() {
                    "provider" => model.provider = text.to_string(),
                    "id" => model.id = text.to_string(),
                    other => return Err(PatchError::UnknownModelField(other.to_string())),
                }
            }
            if model.provider.is_empty() || model.id.is_empty() {
                return Err(PatchError::ModelIncomplete);
            }
            s.model = Some(model);
        }
        ("thinkingLevel", Value::Null) => s.thinking_level = None,
        ("thinkingLevel", Value::String(level)) => {
            ThinkingLevel::parse(level)
                .ok_or_else(|| PatchError::UnknownThinkingLevel(level.clone()))?;
            s.thinking_level = Some(level.clone());
        }
        ("systemPrompt", Value::Null) => s.system_prompt = None,
        ("systemPrompt", Value::String(p)) => s.system_prompt = Some(p.clone()),
        ("maxTokens", Value::Null) => s.max_tokens = None,
        ("maxTokens", v) if v.as_u64().is_some_and(|n| n > 0) => s.max_tokens = v.as_u64(),
        ("model" | "thinkingLevel" | "systemPrompt" | "maxTokens", v) => {
            return Err(PatchError::InvalidValue {
                key: key.to_string(),
                value: v.clone(),
            });
        }
        (other, _) => return Err(PatchError::UnknownSetting(other.to_string())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta() -> SessionMeta {
        SessionMeta::new("s1".into(), "agent:main:main".into(), 1)
    }

    fn patch(
        settings: Option<Value>,
        label: Option<Value>,
        reset_policy: Option<Value>,
    ) -> SessionPatchParams {
        SessionPatchParams {
            session_key: "agent:main:main".into(),
            settings,
            label,
            reset_policy,
        }
    }

    #[test]
    fn model_is_merged_field_by_field() {
        let m = apply_patch(
            &meta(),
            &patch(
                Some(json!({"model": {"provider": "openai", "id": "gpt-4.1"}})),
                None,
                None,
            ),
        )
        .unwrap();
        let m = apply_patch(
            &m,
            &patch(
                Some(json!({"model": {"id": "o3"}, "thinkingLevel": "high"})),
                None,
                None,
            ),
        )
        .unwrap();
        assert_eq!(
            m.settings.model,
            Some(ModelSelection {
                provider: "openai".into(),
                id: "o3".into()
            })
        );
        assert_eq!(m.settings.thinking_level.as_deref(), Some("high"));
        let m = apply_patch(&m, &patch(Some(json!({"model": null})), None, None)).unwrap();
        assert_eq!(m.settings.model, None);
    }

    #[test]
    fn reset_policy_merges_and_defaults_to_manual() {
        let m = apply_patch(
            &meta(),
            &patch(
                None,
                Some(json!("Kitchen")),
                Some(json!({"idleMinutes": 30})),
            ),
        )
        .unwrap();
        assert_eq!(m.reset_policy, Some(json!({"mode": "manual"})));
        assert_eq!(m.label.as_deref(), Some("Kitchen"));
        let m = apply_patch(
            &m,
            &patch(None, None, Some(json!({"mode": "idle", "idleMinutes": 30}))),
        )
        .unwrap();
        assert_eq!(
            m.reset_policy,
            Some(json!({"mode": "idle", "idleMinutes": 30}))
        );
        let m = apply_patch(&m, &patch(None, Some(Value::Null), Some(Value::Null))).unwrap();
        assert_eq!((m.reset_policy, m.label), (None, None));
    }

    #[test]
    fn invalid_values_are_refused_whole() {
        let cases = [
            (patch(Some(json!({"thinkingLevel": "lots"})), None, None), "settings.thinkingLevel \"lots\" is not one of off, minimal, low, medium, high, xhigh"),
            (patch(Some(json!({"model": {"id": "gpt 4"}})), None, None), "settings.model.id must be a non-empty string without spaces"),
            (patch(Some(json!({"model": {"id": "x"}})), None, None), "settings.model needs both provider and id"),
            (patch(Some(json!({"temperature": 2})), None, None), "settings.temperature is not a session setting (model, thinkingLevel, systemPrompt, maxTokens)"),
            (patch(Some(json!({"maxTokens": 0})), None, None), "settings.maxTokens cannot be 0"),
            (patch(None, Some(json!(5)), None), "label must be a string"),
            (patch(None, None, Some(json!({"mode": "daily", "atHour": 31}))), "invalid resetPolicy {\"atHour\":31,\"mode\":\"daily\"}: mode must be manual, daily (atHour 0–23) or idle (idleMinutes ≥ 1)"),
        ];
        for (p, msg) in cases {
            assert_eq!(
                apply_patch(&meta(), &p).map_err(|e| e.to_string()),
                Err(msg.to_string())
            );
        }
    }
}
