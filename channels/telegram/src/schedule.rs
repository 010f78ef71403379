//! What the account object's one alarm is for: a table of deadlines, each
//! of a kind — the inbox's next try, the next poll, each chat's typing
//! renewal — and the alarm set to the earliest. Here are the kinds and the
//! decisions on their times; the object's `alarm` performs them.

use crate::api::ApiError;

/// How soon the inbox tries again while the gateway does not take a call.
pub const INBOX_RETRY_MS: i64 = 10_000;
/// Telegram shows "typing…" for 5 s or until a message: renewed every 4.
pub const TYPING_RENEW_MS: i64 = 4_000;
/// Typing stops by itself this long after the gateway last asked for it
/// (the gateway asks again every few seconds while it works, and says
/// when it stops; should it not, the chat does not show typing for ever).
pub const TYPING_MAX_MS: i64 = 120_000;
/// The longest a failing poll waits before the next.
pub const POLL_BACKOFF_MAX_MS: i64 = 60_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deadline {
    /// Hand the stored updates to the gateway.
    Inbox,
    /// Ask `getUpdates` (polling mode).
    Poll,
    /// Renew "typing…" in a chat (and its forum topic).
    Typing { chat: String, thread: Option<i64> },
}

impl Deadline {
    /// The row's key in the deadlines table.
    pub fn kind(&self) -> String {
        match self {
            Self::Inbox => "inbox".into(),
            Self::Poll => "poll".into(),
            Self::Typing { chat, thread: None } => format!("typing:{chat}"),
            Self::Typing {
                chat,
                thread: Some(t),
            } => format!("typing:{chat}:{t}"),
        }
    }

    pub fn parse(kind: &str) -> Option<Self> {
        match kind {
            "inbox" => Some(Self::Inbox),
            "poll" => Some(Self::Poll),
            _ => {
                let rest = kind.strip_prefix("typing:")?;
                // Chat ids have no ':' (numbers, or @usernames).
                let (chat, thread) = match rest.split_once(':') {
                    Some((chat, t)) => (chat, Some(t.parse().ok()?)),
                    None => (rest, None),
                };
                (!chat.is_empty()).then(|| Self::Typing {
                    chat: chat.to_string(),
                    thread,
                })
            }
        }
    }
}

/// When a typing renewal due now runs next: `None` once typing has run
/// out (`until`, ms since the epoch).
pub fn typing_next(now: i64, until: i64) -> Option<i64> {
    (now < until).then_some(now + TYPING_RENEW_MS)
}

/// What a failed poll does to the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollFailure {
    /// Polling goes on after this many ms; `None`: it stops (the token
    /// was refused: nothing will change until the account is started again).
    pub retry_in_ms: Option<i64>,
    /// What the account's status says meanwhile.
    pub error: String,
}

/// After the `failures`-th failed poll in a row (1 for the first).
pub fn poll_failed(e: &ApiError, failures: u32) -> PollFailure {
    let backoff = 1_000i64
        .saturating_mul(1 << failures.clamp(1, 7).saturating_sub(1))
        .min(POLL_BACKOFF_MAX_MS);
    if e.token_refused() {
        return PollFailure {
            retry_in_ms: None,
            error: crate::account::token_refused(&e.message),
        };
    }
    let (retry_in_ms, error) = match e.code {
        Some(409) => (
            POLL_BACKOFF_MAX_MS,
            format!(
                "Telegram answered 409 Conflict ({}): something else takes this bot's updates — \
                 a webhook set elsewhere, or another program polling with the same token. This \
                 account polls because the Worker has no public URL (TELEGRAM_PUBLIC_URL).",
                e.message
            ),
        ),
        Some(429) => (
            e.retry_after_ms.unwrap_or(backoff).max(backoff),
            format!("Telegram rate-limited polling: {}", e.message),
        ),
        _ => (backoff, format!("polling Telegram failed: {}", e.message)),
    };
    PollFailure {
        retry_in_ms: Some(retry_in_ms),
        error,
    }
}

/// The `getUpdates` offset after updates with `ids`: past the last.
pub fn next_offset(current: Option<i64>, ids: impl IntoIterator<Item = i64>) -> Option<i64> {
    ids.into_iter().map(|id| id + 1).chain(current).max()
}

/// `TELEGRAM_POLL_TIMEOUT` as getUpdates' `timeout`: 25 s unless set, at
/// most 50 (Telegram's own limit).
pub fn poll_timeout_s(var: Option<&str>) -> u32 {
    var.and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(25)
        .min(50)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_one_row_and_reads_back() {
        let kinds = [
            Deadline::Inbox,
            Deadline::Poll,
            Deadline::Typing {
                chat: "-1001234".into(),
                thread: Some(5),
            },
            Deadline::Typing {
                chat: "42".into(),
                thread: None,
            },
        ];
        let keys: Vec<String> = kinds.iter().map(Deadline::kind).collect();
        assert_eq!(keys, ["inbox", "poll", "typing:-1001234:5", "typing:42"]);
        for (kind, key) in kinds.iter().zip(&keys) {
            assert_eq!(Deadline::parse(key).as_ref(), Some(kind));
        }
        for bad in ["typing:", "typing:1:x", "other", ""] {
            assert_eq!(Deadline::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn typing_is_renewed_until_it_runs_out() {
        assert_eq!(typing_next(1_000, 5_000), Some(5_000));
        assert_eq!(typing_next(5_000, 5_000), None);
    }

    fn error(code: u16, retry_after_ms: Option<i64>) -> ApiError {
        ApiError {
            message: format!("E{code}"),
            code: Some(code),
            retryable: true,
            retry_after_ms,
        }
    }

    #[test]
    fn a_failing_poll_backs_off_and_a_conflict_says_why() {
        let waits: Vec<Option<i64>> = [1, 2, 3, 7, 30]
            .map(|n| poll_failed(&error(502, None), n).retry_in_ms)
            .to_vec();
        assert_eq!(
            waits,
            [
                Some(1_000),
                Some(2_000),
                Some(4_000),
                Some(60_000),
                Some(60_000)
            ]
        );
        let conflict = poll_failed(&error(409, None), 1);
        assert_eq!(conflict.retry_in_ms, Some(60_000));
        assert!(conflict
            .error
            .starts_with("Telegram answered 409 Conflict (E409)"));
        assert!(conflict.error.contains("a webhook set elsewhere"));
        assert_eq!(
            poll_failed(&error(429, Some(9_000)), 1).retry_in_ms,
            Some(9_000)
        );
        let refused = poll_failed(&error(401, None), 1);
        assert_eq!(refused.retry_in_ms, None);
        assert!(refused
            .error
            .starts_with("Telegram refused the bot token (E401)"));
        let unreached = poll_failed(&ApiError::unreached("reset".into()), 1);
        assert_eq!(unreached.error, "polling Telegram failed: reset");
    }

    #[test]
    fn the_offset_moves_past_the_last_update() {
        assert_eq!(next_offset(None, []), None);
        assert_eq!(next_offset(Some(10), []), Some(10));
        assert_eq!(next_offset(Some(10), [12, 11]), Some(13));
        // Never back: an old update redelivered does not rewind it.
        assert_eq!(next_offset(Some(20), [3]), Some(20));
        assert_eq!(poll_timeout_s(None), 25);
        assert_eq!(poll_timeout_s(Some("0")), 0);
        assert_eq!(poll_timeout_s(Some("90")), 50);
        assert_eq!(poll_timeout_s(Some("x")), 25);
    }
}
