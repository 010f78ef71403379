//! Asking the owner: a call to an `ask` tool waits for the owner's
//! decision, given in the owner's own chat (`approve CODE`, `deny CODE`,
//! `approve always CODE`), with `gsv approvals` or in the web UI. Here:
//! reading such a reply, and the words both sides see.

use gsv_protocol::channels::ChannelAction;
use gsv_protocol::Approval;

/// The owner's answer to an approval request, as typed in a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub approve: bool,
    /// Also approve this person's (or group's) later calls of the tool.
    pub always: bool,
    pub code: String,
}

/// `approve CODE`, `approve always CODE`, `deny CODE` (any case, the
/// words alone on the message); anything else is a message to the agent.
pub fn parse_reply(text: &str) -> Option<Reply> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let (approve, always, code) = match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["approve", "always", code] => (true, true, code),
        ["approve", code] => (true, false, code),
        ["deny", code] => (false, false, code),
        _ => return None,
    };
    let code = code.to_ascii_uppercase();
    let valid = code.len() == crate::channels::pairing::CODE_LEN
        && code.chars().all(|c| c.is_ascii_alphanumeric());
    valid.then_some(Reply {
        approve,
        always,
        code,
    })
}

/// Who asked, in words: the person, else the group's session.
fn asker(a: &Approval) -> String {
    match &a.who {
        Some(who) => format!("{who} ({})", a.trust),
        None => format!("{} ({})", a.session_key, a.trust),
    }
}

/// What the owner is sent: who asks for which call, with its exact
/// arguments, and how to answer.
pub fn request_text(a: &Approval, timeout_s: i64) -> String {
    let args = serde_json::to_string_pretty(&a.args).unwrap_or_else(|_| a.args.to_string());
    format!(
        "Approval needed: {} asks to run {} with\n{args}\nReply \"approve {code}\" (or \"approve always {code}\" for every later call of this tool by them) or \"deny {code}\". Denied by itself in {}.",
        asker(a),
        a.tool,
        human_seconds(timeout_s),
        code = a.code,
    )
}

/// The request's answers as buttons, for a chat app that has them:
/// pressing one writes the reply the text asks for.
pub fn request_actions(code: &str) -> Vec<ChannelAction> {
    [
        ("Approve", format!("approve {code}")),
        ("Approve always", format!("approve always {code}")),
        ("Deny", format!("deny {code}")),
    ]
    .into_iter()
    .map(|(label, text)| ChannelAction {
        label: label.into(),
        text,
    })
    .collect()
}

/// The owner's confirmation of a decision.
pub fn decided_text(a: &Approval, decision: &str) -> String {
    format!("{} {} for {} ({}).", a.tool, decision, asker(a), a.code)
}

/// What the model reads for a call the owner denied or let time out.
pub fn refusal_text(tool: &str, why: &str) -> String {
    format!("{tool} was not run: {why}. Tell the person the owner did not approve it.")
}

fn human_seconds(s: i64) -> String {
    match s {
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::Trust;
    use serde_json::json;

    #[test]
    fn replies_are_the_three_forms_with_a_code_and_nothing_else() {
        let r = |approve, always, code: &str| {
            Some(Reply {
                approve,
                always,
                code: code.into(),
            })
        };
        assert_eq!(parse_reply("approve ABCD2345"), r(true, false, "ABCD2345"));
        assert_eq!(
            parse_reply("  Approve abcd2345 "),
            r(true, false, "ABCD2345")
        );
        assert_eq!(
            parse_reply("approve always ABCD2345"),
            r(true, true, "ABCD2345")
        );
        assert_eq!(parse_reply("DENY abcd2345"), r(false, false, "ABCD2345"));
        for text in [
            "approve",
            "approve ABC",
            "please approve ABCD2345",
            "deny always ABCD2345",
            "approve ABCD-345",
            "approve ABCD2345 now",
        ] {
            assert_eq!(parse_reply(text), None, "{text}");
        }
    }

    #[test]
    fn each_button_writes_a_reply_the_owner_could_type() {
        let actions = request_actions("ABCD2345");
        let pairs: Vec<(&str, &str)> = actions
            .iter()
            .map(|a| (a.label.as_str(), a.text.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("Approve", "approve ABCD2345"),
                ("Approve always", "approve always ABCD2345"),
                ("Deny", "deny ABCD2345"),
            ]
        );
        let replies: Vec<Option<Reply>> = actions.iter().map(|a| parse_reply(&a.text)).collect();
        let r = |approve, always| {
            Some(Reply {
                approve,
                always,
                code: "ABCD2345".into(),
            })
        };
        assert_eq!(replies, [r(true, false), r(true, true), r(false, false)]);
        // Telegram's callback_data holds at most 64 bytes.
        assert!(actions.iter().all(|a| a.text.len() <= 64));
    }

    #[test]
    fn the_owner_reads_who_asks_for_what_exactly() {
        let a = Approval {
            code: "ABCD2345".into(),
            session_key: "agent:main:discord:dm:82".into(),
            who: Some("discord:82".into()),
            trust: Trust::APPROVED,
            tool: "laptop__Bash".into(),
            args: json!({"command": "ls ~"}),
            created_at_ms: 0,
            expires_at_ms: 300_000,
        };
        assert_eq!(
            request_text(&a, 300),
            "Approval needed: discord:82 (approved) asks to run laptop__Bash with\n{\n  \"command\": \"ls ~\"\n}\nReply \"approve ABCD2345\" (or \"approve always ABCD2345\" for every later call of this tool by them) or \"deny ABCD2345\". Denied by itself in 5 min."
        );
        assert_eq!(
            decided_text(&a, "approved"),
            "laptop__Bash approved for discord:82 (approved) (ABCD2345)."
        );
        let group = Approval {
            who: None,
            trust: Trust::GROUP,
            ..a
        };
        assert_eq!(
            decided_text(&group, "denied"),
            "laptop__Bash denied for agent:main:discord:dm:82 (group) (ABCD2345)."
        );
        assert_eq!(human_seconds(90), "90 s");
        assert_eq!(human_seconds(7200), "2 h");
    }
}
