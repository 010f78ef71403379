//! What a gateway close code means for the next connection, per Discord's
//! "Gateway Close Event Codes" table.

/// The next step after the gateway closed with a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterClose {
    /// Reconnect and RESUME the session (when one is known).
    Resume,
    /// Reconnect with a fresh IDENTIFY: the session is gone.
    Reidentify,
    /// Do not reconnect: only the operator can fix this. The text says why.
    Fatal(&'static str),
}

pub fn after_close(code: u16) -> AfterClose {
    match code {
        4004 => AfterClose::Fatal("authentication failed: Discord refused the bot token"),
        4010 => AfterClose::Fatal("invalid shard"),
        4011 => AfterClose::Fatal(
            "sharding required: the bot is in too many guilds for one connection",
        ),
        4012 => AfterClose::Fatal("invalid API version"),
        4013 => AfterClose::Fatal("invalid intents: the intents value is not a valid bitfield"),
        4014 => AfterClose::Fatal(
            "disallowed intents: enable the privileged intents (Message Content) for this bot in the Discord Developer Portal, or start it without them",
        ),
        // "Reconnect and start a new session."
        4007 | 4009 => AfterClose::Reidentify,
        // 4000-4003, 4005, 4008, network drops (1006) and anything else.
        _ => AfterClose::Resume,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_codes_never_reconnect() {
        for code in [4004, 4010, 4011, 4012, 4013, 4014] {
            assert!(matches!(after_close(code), AfterClose::Fatal(_)), "{code}");
        }
    }

    #[test]
    fn invalid_seq_and_timeout_start_a_new_session() {
        assert_eq!(after_close(4007), AfterClose::Reidentify);
        assert_eq!(after_close(4009), AfterClose::Reidentify);
    }

    #[test]
    fn others_resume() {
        for code in [1000, 1001, 1006, 4000, 4001, 4002, 4003, 4005, 4008] {
            assert_eq!(after_close(code), AfterClose::Resume, "{code}");
        }
    }
}
