//! What a session remembers about itself besides its messages.

use gsv_protocol::{SessionGetResult, SessionSettings, TokenCounts, Usage};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMeta {
    pub session_id: String,
    pub session_key: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default)]
    pub tokens: TokenCounts,
    #[serde(default)]
    pub settings: SessionSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_policy: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reset_at: Option<i64>,
    #[serde(default)]
    pub previous_session_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The prompt size the provider reported for the last model call
    /// (input + cache tokens): what compaction measures first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_input_tokens: Option<u64>,
    #[serde(default)]
    pub compaction_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_compacted_at: Option<i64>,
    /// Who spoke last, as the gateway decided (absent before a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<gsv_protocol::Trust>,
    /// The tokens of the last run (all its model calls), and their cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn: Option<TokenCounts>,
}

impl SessionMeta {
    /// A new session; written to storage at once so its id and creation time
    /// never change across evictions.
    pub fn new(session_id: String, session_key: String, now: i64) -> Self {
        Self {
            session_id,
            session_key,
            created_at: now,
            updated_at: now,
            tokens: TokenCounts::default(),
            settings: SessionSettings::default(),
            reset_policy: None,
            last_reset_at: None,
            previous_session_ids: Vec::new(),
            label: None,
            last_input_tokens: None,
            compaction_count: 0,
            last_compacted_at: None,
            trust: None,
            last_turn: None,
        }
    }

    /// Counts one model call's usage, and its cost at `prices` if known,
    /// for the session and its last turn (`first`: the turn's first call).
    pub fn add_usage(
        &mut self,
        usage: &Usage,
        prices: Option<&crate::llm::prices::Prices>,
        first: bool,
    ) {
        self.last_input_tokens = Some(usage.input + usage.cache_read + usage.cache_write);
        crate::llm::prices::count(&mut self.tokens, usage, prices);
        let turn = match (first, self.last_turn.take()) {
            (false, Some(turn)) => turn,
            _ => TokenCounts::default(),
        };
        let turn = self.last_turn.insert(turn);
        crate::llm::prices::count(turn, usage, prices);
    }

    pub fn to_result(&self, message_count: u64) -> SessionGetResult {
        SessionGetResult {
            session_id: self.session_id.clone(),
            session_key: self.session_key.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            message_count,
            tokens: self.tokens.clone(),
            settings: self.settings.clone(),
            reset_policy: self.reset_policy.clone(),
            last_reset_at: self.last_reset_at,
            previous_session_ids: self.previous_session_ids.clone(),
            label: self.label.clone(),
            trust: self.trust,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_accumulates() {
        let mut m = SessionMeta::new("s1".into(), "agent:main:main".into(), 10);
        m.add_usage(
            &Usage {
                input: 100,
                output: 20,
                total_tokens: 120,
                ..Default::default()
            },
            None,
            true,
        );
        m.add_usage(
            &Usage {
                input: 5,
                output: 5,
                cache_read: 1000,
                ..Default::default()
            },
            None,
            false,
        );
        assert_eq!(
            m.tokens,
            TokenCounts {
                input: 105,
                output: 25,
                total: 1130,
                cache_read: 1000,
                ..Default::default()
            }
        );
        assert_eq!(m.last_input_tokens, Some(1005));
        assert_eq!(m.last_turn, Some(m.tokens.clone()));
        // The next turn's first call starts the turn's count again.
        let usage = Usage {
            input: 7,
            ..Default::default()
        };
        m.add_usage(&usage, None, true);
        assert_eq!(
            m.last_turn,
            Some(TokenCounts {
                input: 7,
                total: 7,
                ..Default::default()
            })
        );
    }
}
