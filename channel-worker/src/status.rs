//! An account's status as every channel reports it, and the answers of
//! the calls that change it.

use gsv_protocol::channels::{ChannelAccountStatus, OkResult};
use serde_json::Value;

/// A call (start, stop, …) done.
pub fn ok() -> OkResult {
    OkResult {
        ok: true,
        error: None,
    }
}

/// A call refused, and why, in plain words.
pub fn refused(error: String) -> OkResult {
    OkResult {
        ok: false,
        error: Some(error),
    }
}

/// How an account is doing, as its state says.
#[derive(Debug, Clone, Copy)]
pub struct Health<'a> {
    /// Started (and not stopped since).
    pub started: bool,
    /// The platform took its credentials when last asked.
    pub authenticated: bool,
    /// Why it is not working, in plain words.
    pub error: Option<&'a str>,
}

impl Health<'_> {
    /// The status: connected when started, authenticated and without an
    /// error; a stopped account without another reason is "not started".
    pub fn status(
        self,
        account_id: &str,
        mode: Option<String>,
        last_activity: Option<i64>,
        extra: Value,
    ) -> ChannelAccountStatus {
        let error = match (self.started, self.error) {
            (_, Some(e)) => Some(e.to_string()),
            (false, None) => Some("not started".to_string()),
            (true, None) => None,
        };
        ChannelAccountStatus {
            account_id: account_id.to_string(),
            connected: self.started && self.authenticated && self.error.is_none(),
            authenticated: self.authenticated,
            mode,
            last_activity,
            error,
            extra: Some(extra),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn connected_only_when_started_authenticated_and_well() {
        let health = |started, authenticated, error| Health {
            started,
            authenticated,
            error,
        };
        let cases = [
            (health(true, true, None), (true, None)),
            (health(true, false, None), (false, None)),
            (health(true, true, Some("409")), (false, Some("409"))),
            (health(false, true, None), (false, Some("not started"))),
            (
                health(false, true, Some("refused")),
                (false, Some("refused")),
            ),
        ];
        for (h, (connected, error)) in cases {
            let s = h.status("a", Some("webhook".into()), Some(5), json!({}));
            assert_eq!(
                (s.connected, s.error.as_deref()),
                (connected, error),
                "{h:?}"
            );
            assert_eq!(
                (s.mode.as_deref(), s.last_activity),
                (Some("webhook"), Some(5))
            );
        }
    }
}
