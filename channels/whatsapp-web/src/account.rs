//! One account: one WhatsApp number linked as a companion device. Its
//! state says where the link stands (waiting for a scan, connecting,
//! linked, logged out by the phone) and why, in the words `gsv channel
//! status` shows; the keys themselves live in the store, never here.

use gsv_channel_worker::status::Health;
use gsv_protocol::channels::ChannelAccountStatus;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Where the link stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Link {
    /// No device keys: a QR code (or a pairing code) must be scanned.
    #[default]
    NotLinked,
    /// Showing QR codes for the phone to scan.
    WaitingForScan,
    /// Linked; the socket is being opened (or re-opened).
    Connecting,
    /// Linked and connected: messages flow.
    Linked,
    /// The phone unlinked the device (or WhatsApp ended the session): a new
    /// login is needed.
    LoggedOut,
}

impl Link {
    pub fn name(self) -> &'static str {
        match self {
            Self::NotLinked => "not linked",
            Self::WaitingForScan => "waiting for scan",
            Self::Connecting => "connecting",
            Self::Linked => "linked",
            Self::LoggedOut => "logged out",
        }
    }
}

/// What the account's object keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Account {
    /// Connecting and taking messages (until stopped).
    pub started: bool,
    pub link: Link,
    /// The QR code's text now on offer, and until when (ms since the
    /// epoch); WhatsApp rotates it.
    pub qr: Option<String>,
    pub qr_until: Option<i64>,
    /// The phone-number pairing code now on offer, and for which number.
    pub pair_code: Option<String>,
    pub pair_phone: Option<String>,
    /// The linked number in E.164, and its device's JID.
    pub phone: Option<String>,
    pub device_jid: Option<String>,
    /// The linked number's LID (mentions in groups may name it).
    pub lid: Option<String>,
    /// Why it is not working, in plain words.
    pub error: Option<String>,
    /// Milliseconds since the epoch: the last message in or out.
    pub last_activity: Option<i64>,
    /// Sockets opened since start (the first included).
    pub connects: u32,
}

impl Account {
    /// The account as the gateway sees it.
    pub fn status(&self, account_id: &str) -> ChannelAccountStatus {
        let linked = matches!(self.link, Link::Linked | Link::Connecting);
        let error = self
            .error
            .clone()
            .or_else(|| match (self.started, self.link) {
                (true, Link::NotLinked | Link::WaitingForScan) => Some(
                    "not linked yet: run `gsv channel login whatsapp-web` and scan the QR code \
                 (WhatsApp → Settings → Linked devices → Link a device)"
                        .to_string(),
                ),
                (true, Link::Connecting) => Some("connecting to WhatsApp".to_string()),
                _ => None,
            });
        let health = Health {
            started: self.started,
            authenticated: linked,
            error: error.as_deref(),
        };
        health.status(
            account_id,
            Some("linked-device".to_string()),
            self.last_activity,
            json!({
                "state": self.link.name(),
                "phone": self.phone,
                "qrOnOffer": self.qr.is_some(),
                "connects": self.connects,
            }),
        )
    }
}

/// Why WhatsApp ended the session (the crate's reason's name), in words.
pub fn logout_reason(reason: &str) -> String {
    match reason {
        "LoggedOut" => "logged out: the phone unlinked this device (WhatsApp → Linked devices); \
                        run `gsv channel login whatsapp-web` to link again"
            .into(),
        "AccountLocked" => {
            "logged out: WhatsApp locked the account; open WhatsApp on the phone".into()
        }
        "TempBanned" => "logged out: WhatsApp banned the number for a while".into(),
        other => format!(
            "logged out by WhatsApp ({other}): run `gsv channel login whatsapp-web` to link again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_says_where_the_link_stands() {
        let linked = Account {
            started: true,
            link: Link::Linked,
            phone: Some("+15550001111".into()),
            connects: 2,
            last_activity: Some(5),
            ..Account::default()
        };
        assert_eq!(
            linked.status("default"),
            ChannelAccountStatus {
                account_id: "default".into(),
                connected: true,
                authenticated: true,
                mode: Some("linked-device".into()),
                last_activity: Some(5),
                error: None,
                extra: Some(json!({
                    "state": "linked",
                    "phone": "+15550001111",
                    "qrOnOffer": false,
                    "connects": 2,
                })),
            }
        );
        let waiting = Account {
            started: true,
            link: Link::WaitingForScan,
            qr: Some("2@abc".into()),
            ..Account::default()
        };
        let s = waiting.status("default");
        assert!(!s.connected && !s.authenticated);
        assert_eq!(
            s.error.as_deref(),
            Some(
                "not linked yet: run `gsv channel login whatsapp-web` and scan the QR code \
                 (WhatsApp → Settings → Linked devices → Link a device)"
            )
        );
        let out = Account {
            started: true,
            link: Link::LoggedOut,
            error: Some("logged out by the phone (device removed)".into()),
            ..Account::default()
        };
        let s = out.status("default");
        assert_eq!(
            (
                s.connected,
                s.error.as_deref(),
                s.extra.and_then(|e| e.get("state").cloned())
            ),
            (
                false,
                Some("logged out by the phone (device removed)"),
                Some(json!("logged out"))
            )
        );
    }
}
