//! Pairing: an unknown sender under `dmPolicy: pairing` gets one reply with
//! an 8-character code; the owner approves it (`gsv pair approve CODE`, or
//! by `channel:id`) and the sender joins `allowFrom`. A code lives one hour;
//! a channel account has at most three requests pending, and further
//! strangers are ignored until one is settled, so a flood of strangers
//! cannot make the bot spam codes. Nothing a pending sender writes is run
//! or stored in any session.

use gsv_protocol::channels::ChannelAction;

/// Codes use letters and digits that cannot be misread for one another.
const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
pub const CODE_LEN: usize = 8;
/// How long a code can be approved.
pub const CODE_TTL_MS: i64 = 3_600_000;
/// Pending requests per channel account.
pub const MAX_PENDING: usize = 3;

/// A sender waiting for the owner's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingPair {
    pub channel: String,
    pub account_id: String,
    /// The sender's id as the channel compares it.
    pub sender_id: String,
    pub sender_name: Option<String>,
    /// Where the sender can be told of the decision (the DM's peer id).
    pub peer_id: String,
    pub code: String,
    pub created_at_ms: i64,
}

impl PendingPair {
    pub fn expires_at_ms(&self) -> i64 {
        self.created_at_ms + CODE_TTL_MS
    }

    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms < self.expires_at_ms()
    }

    /// `channel:id`, how the owner may name the sender instead of the code.
    pub fn address(&self) -> String {
        format!("{}:{}", self.channel, self.sender_id)
    }
}

/// A pairing code from 8 random bytes.
pub fn code_from(random: [u8; CODE_LEN]) -> String {
    random
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect()
}

/// What an unknown sender's message leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairRequest {
    /// A new request: store it and send the sender its code.
    New(PendingPair),
    /// The sender already has a live code: say nothing again.
    AlreadyPending,
    /// The account has `MAX_PENDING` live requests: ignore the sender.
    Full,
}

/// Who asks, on which channel account, with which fresh code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asker<'a> {
    pub channel: &'a str,
    pub account_id: &'a str,
    pub sender_id: &'a str,
    pub sender_name: Option<&'a str>,
    pub peer_id: &'a str,
}

/// Decides on an unknown sender's message given the requests stored (expired
/// ones are treated as gone; the caller deletes them).
pub fn request(
    pending: &[PendingPair],
    asker: &Asker<'_>,
    code: String,
    now_ms: i64,
) -> PairRequest {
    let live: Vec<&PendingPair> = pending
        .iter()
        .filter(|p| {
            p.is_live(now_ms) && p.channel == asker.channel && p.account_id == asker.account_id
        })
        .collect();
    if live.iter().any(|p| p.sender_id == asker.sender_id) {
        return PairRequest::AlreadyPending;
    }
    if live.len() >= MAX_PENDING {
        return PairRequest::Full;
    }
    PairRequest::New(PendingPair {
        channel: asker.channel.to_string(),
        account_id: asker.account_id.to_string(),
        sender_id: asker.sender_id.to_string(),
        sender_name: asker.sender_name.map(str::to_string),
        peer_id: asker.peer_id.to_string(),
        code,
        created_at_ms: now_ms,
    })
}

/// The live request `selector` names: its code (any case, spaces ignored)
/// or `channel:senderId`.
pub fn find<'a>(
    pending: &'a [PendingPair],
    selector: &str,
    now_ms: i64,
) -> Option<&'a PendingPair> {
    let wanted: String = selector.chars().filter(|c| !c.is_whitespace()).collect();
    pending.iter().filter(|p| p.is_live(now_ms)).find(|p| {
        p.code.eq_ignore_ascii_case(&wanted)
            || (wanted.contains(':') && p.address().eq_ignore_ascii_case(&wanted))
    })
}

/// The reply an unknown sender gets once.
pub fn code_reply(code: &str) -> String {
    format!(
        "Hi! I only talk with people my owner has approved. Your pairing code is {code}. \
         Ask my owner to approve it (gsv pair approve {code}); it is valid for one hour."
    )
}

/// What the owner is told of a new request, in the chat the owner last
/// wrote from. The sender's name is theirs to choose: shown, never obeyed.
pub fn owner_notice(pair: &PendingPair) -> String {
    let who = match &pair.sender_name {
        Some(name) => format!("{name} ({})", pair.address()),
        None => pair.address(),
    };
    format!(
        "{who} asks to talk with me on {}. Reply \"pair approve {code}\" to let them, \
         or \"pair reject {code}\"; the code is valid for one hour.",
        pair.channel,
        code = pair.code
    )
}

/// The notice's answers as buttons, for a chat app that has them.
pub fn owner_actions(code: &str) -> Vec<ChannelAction> {
    [
        ("Approve", format!("pair approve {code}")),
        ("Reject", format!("pair reject {code}")),
    ]
    .into_iter()
    .map(|(label, text)| ChannelAction {
        label: label.into(),
        text,
    })
    .collect()
}

/// The owner's answer to a request, typed or pressed: `pair approve CODE`
/// (true) or `pair reject CODE` (false), any case, the words alone.
pub fn parse_owner_reply(text: &str) -> Option<(bool, String)> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let (approve, code) = match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["pair", "approve", code] => (true, code),
        ["pair", "reject", code] => (false, code),
        _ => return None,
    };
    let code = code.to_ascii_uppercase();
    let valid = code.len() == CODE_LEN && code.bytes().all(|b| ALPHABET.contains(&b));
    valid.then_some((approve, code))
}

/// What the sender is told when the owner approves.
pub const APPROVED_REPLY: &str = "You're approved: I'll answer your messages from now on.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_told_of_a_request_and_answers_it_in_words_or_buttons() {
        let pair = PendingPair {
            channel: "telegram".into(),
            account_id: "default".into(),
            sender_id: "5001".into(),
            sender_name: Some("Ann Example".into()),
            peer_id: "5001".into(),
            code: "ABCD2345".into(),
            created_at_ms: 0,
        };
        assert_eq!(
            owner_notice(&pair),
            "Ann Example (telegram:5001) asks to talk with me on telegram. Reply \"pair approve ABCD2345\" to let them, or \"pair reject ABCD2345\"; the code is valid for one hour."
        );
        let nameless = PendingPair {
            sender_name: None,
            ..pair
        };
        assert!(owner_notice(&nameless).starts_with("telegram:5001 asks"));
        let answers: Vec<(String, Option<(bool, String)>)> = owner_actions("ABCD2345")
            .into_iter()
            .map(|a| (a.label, parse_owner_reply(&a.text)))
            .collect();
        assert_eq!(
            answers,
            [
                ("Approve".to_string(), Some((true, "ABCD2345".to_string()))),
                ("Reject".to_string(), Some((false, "ABCD2345".to_string()))),
            ]
        );
        assert_eq!(
            parse_owner_reply("  Pair APPROVE abcd2345 "),
            Some((true, "ABCD2345".into()))
        );
        for text in [
            "pair approve",
            "pair approve ABCD234",
            "pair approve ABCD2341",
            "approve ABCD2345",
            "please pair approve ABCD2345",
            "pair approve ABCD2345 now",
        ] {
            assert_eq!(parse_owner_reply(text), None, "{text}");
        }
    }

    const NOW: i64 = 1_795_529_100_000;

    fn asker(sender: &str) -> Asker<'_> {
        Asker {
            channel: "discord",
            account_id: "default",
            sender_id: sender,
            sender_name: Some("Eve"),
            peer_id: sender,
        }
    }

    fn pending(sender: &str, code: &str, at: i64) -> PendingPair {
        PendingPair {
            channel: "discord".into(),
            account_id: "default".into(),
            sender_id: sender.into(),
            sender_name: Some("Eve".into()),
            peer_id: sender.into(),
            code: code.into(),
            created_at_ms: at,
        }
    }

    #[test]
    fn codes_are_eight_unambiguous_characters() {
        assert_eq!(code_from([0, 1, 2, 3, 31, 32, 255, 8]), "ABCD9A9J");
        let code = code_from([200; 8]);
        assert_eq!(code.len(), CODE_LEN);
        assert!(!code.contains(['0', 'O', '1', 'I']));
    }

    #[test]
    fn a_stranger_gets_one_code_and_the_account_at_most_three() {
        assert_eq!(
            request(&[], &asker("7"), "AAAA2222".into(), NOW),
            PairRequest::New(pending("7", "AAAA2222", NOW))
        );
        let stored = vec![pending("7", "AAAA2222", NOW)];
        assert_eq!(
            request(&stored, &asker("7"), "BBBB3333".into(), NOW + 60_000),
            PairRequest::AlreadyPending
        );
        let full = vec![
            pending("7", "AAAA2222", NOW),
            pending("8", "BBBB3333", NOW),
            pending("9", "CCCC4444", NOW),
        ];
        assert_eq!(
            request(&full, &asker("10"), "DDDD5555".into(), NOW + 1),
            PairRequest::Full
        );
        // Another account of the channel has room of its own.
        let other = Asker {
            account_id: "work",
            ..asker("10")
        };
        assert!(matches!(
            request(&full, &other, "E".into(), NOW),
            PairRequest::New(_)
        ));
    }

    #[test]
    fn codes_expire_after_an_hour() {
        let stored = vec![pending("7", "AAAA2222", NOW)];
        let later = NOW + CODE_TTL_MS;
        assert!(find(&stored, "AAAA2222", later - 1).is_some());
        assert_eq!(find(&stored, "AAAA2222", later), None);
        // An expired code no longer counts: the sender may ask again.
        assert!(matches!(
            request(&stored, &asker("7"), "NEW22222".into(), later),
            PairRequest::New(_)
        ));
    }

    #[test]
    fn the_owner_names_a_request_by_code_or_address() {
        let stored = vec![pending("7", "AAAA2222", NOW), pending("8", "BBBB3333", NOW)];
        assert_eq!(find(&stored, "bbbb 3333", NOW), Some(&stored[1]));
        assert_eq!(find(&stored, "discord:7", NOW), Some(&stored[0]));
        assert_eq!(find(&stored, "Discord:8", NOW), Some(&stored[1]));
        assert_eq!(find(&stored, "whatsapp:7", NOW), None);
        assert_eq!(find(&stored, "ZZZZ9999", NOW), None);
    }
}
