//! Linking: `channel.login` starts the client without keys, which makes
//! WhatsApp offer QR codes (or, given a phone number, a pairing code),
//! and answers with the code now on offer. The CLI and the web UI ask
//! again while the phone has not scanned: WhatsApp rotates the codes.

use super::account_do::{now_ms, Inner};
use super::ACCOUNTS;
use crate::account::Link;
use crate::qr;
use gsv_channel_worker::internal_post;
use gsv_protocol::channels::*;
use std::rc::Rc;
use std::time::Duration;
use worker::*;

/// How long a login waits for WhatsApp's first code.
const CODE_WAIT_MS: i64 = 15_000;
const POLL_MS: u64 = 200;

fn answer(ok: bool, message: String) -> ChannelLoginResult {
    ChannelLoginResult {
        ok,
        qr_data_url: None,
        qr: None,
        pair_code: None,
        linked: false,
        message,
    }
}

impl Inner {
    pub async fn login(self: &Rc<Self>, p: ChannelLoginParams) -> Result<ChannelLoginResult> {
        let pair_phone = match p.phone_number.as_deref().map(digits) {
            Some(Ok(d)) => Some(d),
            Some(Err(why)) => return Ok(answer(false, why)),
            None => None,
        };
        let mut account = self.current().unwrap_or_default();
        let linked = matches!(account.link, Link::Linked | Link::Connecting);
        if linked && !p.force {
            self.ensure_started(&p.account_id, account).await?;
            let now = self.current().unwrap_or_default();
            return Ok(ChannelLoginResult {
                linked: true,
                ..answer(
                    true,
                    format!(
                        "linked as {}",
                        now.phone.as_deref().unwrap_or("this number")
                    ),
                )
            });
        }
        if p.force && linked {
            self.unlink().await?;
            account = self.current().unwrap_or_default();
        }
        // A pairing code asked for while QR codes are on offer (or the
        // other way round): a new client, started the asked way.
        let asked_code = pair_phone.is_some();
        let offering_code = account.pair_code.is_some();
        if self.client().is_some() && asked_code != offering_code {
            let running = self.running.borrow_mut().take();
            if let Some(running) = running {
                running.end(false).await;
            }
            self.update(|a| {
                a.qr = None;
                a.pair_code = None;
            });
        }
        self.ensure_started(&p.account_id, account).await?;
        let asked_at = now_ms();
        self.connect(pair_phone).await;
        let until = asked_at + CODE_WAIT_MS;
        loop {
            let a = self.current().unwrap_or_default();
            if a.link == Link::Linked || a.link == Link::Connecting {
                return Ok(ChannelLoginResult {
                    linked: true,
                    ..answer(
                        true,
                        format!("linked as {}", a.phone.as_deref().unwrap_or("this number")),
                    )
                });
            }
            if let (false, Some(code)) = (asked_code, a.qr.clone()) {
                return Ok(ChannelLoginResult {
                    qr_data_url: qr::data_url(&code),
                    qr: Some(code),
                    ..answer(
                        true,
                        "scan this QR code with WhatsApp on the phone: Settings → Linked \
                         devices → Link a device"
                            .into(),
                    )
                });
            }
            if let (true, Some(code)) = (asked_code, a.pair_code.clone()) {
                return Ok(ChannelLoginResult {
                    pair_code: Some(code),
                    ..answer(
                        true,
                        "on the phone: WhatsApp → Settings → Linked devices → Link a device → \
                         Link with phone number instead, then type this code"
                            .into(),
                    )
                });
            }
            if let Some(error) = a.error.clone().filter(|_| self.client().is_none()) {
                return Ok(answer(false, error));
            }
            if let Some(why) = super::platform::connect_failure_since(asked_at) {
                return Ok(answer(
                    false,
                    format!("could not connect to WhatsApp: {why}"),
                ));
            }
            if now_ms() >= until {
                return Ok(answer(
                    false,
                    "WhatsApp offered no code in time; check the Worker can reach \
                     web.whatsapp.com, then try again"
                        .into(),
                ));
            }
            Delay::from(Duration::from_millis(POLL_MS)).await;
        }
    }

    /// Marks the account started (a login starts it) and registered.
    async fn ensure_started(
        &self,
        account_id: &str,
        mut account: crate::account::Account,
    ) -> Result<()> {
        if account.started && self.account.id().as_deref() == Some(account_id) {
            return Ok(());
        }
        account.started = true;
        if account.link == Link::LoggedOut {
            account.link = Link::NotLinked;
        }
        self.save(account_id, account)?;
        ACCOUNTS
            .registry(&self.env)?
            .fetch_with_request(internal_post("/register", account_id.to_string())?)
            .await?;
        Ok(())
    }

    /// Ends the link: the device is removed on WhatsApp's side, its keys
    /// forgotten here.
    pub async fn unlink(&self) -> Result<()> {
        let running = self.running.borrow_mut().take();
        if let Some(running) = running {
            running.end(true).await;
        }
        if let Some(store) = &self.store {
            super::tables::forget_keys(store)?;
        }
        self.update(|a| {
            a.link = Link::NotLinked;
            a.phone = None;
            a.device_jid = None;
            a.lid = None;
            a.qr = None;
            a.qr_until = None;
            a.pair_code = None;
        });
        Ok(())
    }
}

/// A phone number (any writing) → its digits with the country code.
fn digits(number: &str) -> std::result::Result<String, String> {
    let d: String = number.chars().filter(char::is_ascii_digit).collect();
    match (7..=15).contains(&d.len()) {
        true => Ok(d),
        false => Err(format!(
            "{number} is not a phone number with its country code (like +15551234567)"
        )),
    }
}
