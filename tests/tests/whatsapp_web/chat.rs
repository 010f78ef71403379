//! A conversation on the WhatsApp Web channel: the real gateway and the
//! channel's test build in one workerd, the WhatsApp Web double with the
//! agent's number and a contact, the fake LLM, and the owner's client.

use gsv_e2e::channel_rig::start_gateway_with_whatsapp_web;
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_whatsapp_web::{FakeWhatsAppWeb, Received};
use gsv_e2e::harness::Workerd;
use gsv_e2e::poll::{self, ms};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Duration;

pub const TOKEN: &str = "test-token";
pub const WAIT: Duration = Duration::from_secs(30);
/// The number the agent chats from (the user's own).
pub const AGENT: &str = "15550001111";
/// Someone who writes to it.
pub const ANN: &str = "15551234567";

pub struct Chat {
    pub wa: FakeWhatsAppWeb,
    pub llm: FakeLlm,
    pub gw: Workerd,
    pub owner: Client,
}

/// Not linked yet: the agent's number and Ann's on the double.
pub async fn start() -> Chat {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account_named(AGENT, "Agent");
    wa.add_account_named(ANN, "Ann Lee");
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_whatsapp_web(&wa, TOKEN, false);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    Chat { wa, llm, gw, owner }
}

/// A linked number whose DMs are open to anyone (no pairing step).
pub async fn open_chat() -> Chat {
    let mut chat = start().await;
    chat.owner
        .config_set("channels.whatsapp-web.dmPolicy", json!("open"))
        .await;
    chat.link().await;
    chat
}

impl Chat {
    /// `channel.login` for the account; its result.
    pub async fn login_with(&mut self, params: Value) -> Value {
        let res = self.owner.request("channel.login", params).await;
        assert!(res.ok, "channel.login: {res:?}\n{}", self.gw.log());
        res.payload.unwrap()
    }

    pub async fn login(&mut self) -> Value {
        self.login_with(json!({"channel": "whatsapp-web"})).await
    }

    /// Links the agent's number: a login shows a QR code, the phone scans it.
    pub async fn link(&mut self) {
        let login = self.login().await;
        let qr = login["qr"].as_str().unwrap_or_else(|| panic!("{login}"));
        self.wa.scan_qr(qr, AGENT).unwrap();
        self.wa.wait_connected(AGENT);
        self.status_when(|s| s["connected"] == true).await;
    }

    pub async fn status(&mut self) -> Value {
        let res = self
            .owner
            .request("channel.status", json!({"channel": "whatsapp-web"}))
            .await;
        assert!(res.ok, "{res:?}");
        res.payload.unwrap()["accounts"][0].clone()
    }

    /// The account's status once `done` holds for it.
    pub async fn status_when(&mut self, done: impl Fn(&Value) -> bool) -> Value {
        let seen = poll::try_until(WAIT, ms(200), async || {
            let s = self.status().await;
            match done(&s) {
                true => Ok(s),
                false => Err(s),
            }
        })
        .await;
        seen.unwrap_or_else(|last| panic!("status {last}\nworkerd log:\n{}", self.gw.log()))
    }

    /// A day and an hour later (the gateway's test clock, heartbeats
    /// allowed at any hour whenever the test runs) the heartbeat has
    /// `task` to do, and the model `says` it.
    pub async fn heartbeat_a_day_later(&mut self, task: &str, says: &str) {
        let w = self
            .owner
            .request(
                "workspace.write",
                json!({"path": "HEARTBEAT.md", "content": format!("- {task}\n")}),
            )
            .await;
        assert!(w.ok, "{w:?}");
        self.owner
            .config_set(
                "agents.defaultHeartbeat.activeHours",
                json!({"start": "00:00", "end": "00:00"}),
            )
            .await;
        self.llm.script("Read HEARTBEAT.md", vec![Step::text(says)]);
        self.gw.advance_clock(25 * 3_600_000);
    }

    /// The Noise handshakes the agent's device opened its sockets with, in
    /// order (`XX` to link, `IK` when reconnecting with the cached key).
    pub fn handshakes(&self) -> Vec<String> {
        self.wa
            .logins(AGENT)
            .iter()
            .map(|l| l.pattern.clone())
            .collect()
    }

    /// How often the model was asked with `text` in the last thing said.
    pub fn asked_about(&self, text: &str) -> usize {
        self.llm
            .requests()
            .iter()
            .filter(|r| {
                r.body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .is_some_and(|m| m.to_string().contains(text))
            })
            .count()
    }

    /// Waits until `phone` got `n` messages from the agent's number.
    pub fn wait_got(&self, phone: &str, n: usize) -> Vec<Received> {
        self.wait_got_within(phone, n, WAIT)
    }

    pub fn wait_got_within(&self, phone: &str, n: usize, within: Duration) -> Vec<Received> {
        poll::until_blocking(within, ms(100), || {
            let got = self.wa.received(phone);
            match got.len() >= n {
                true => Ok(got),
                false => Err(format!("{got:#?}\nworkerd log:\n{}", self.gw.log())),
            }
        })
    }
}
