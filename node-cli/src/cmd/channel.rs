//! `gsv channel list|start|stop|status` and `gsv pair list|approve|reject`:
//! the chat apps the agent is reachable from, and the senders waiting for
//! the owner's approval.

use super::{print_answer, GatewayTarget};
use crate::cli::{ChannelCommand, PairCommand};
use anyhow::Result;
use gsv_protocol::channels::{ChannelAccountConfig, ChannelAccountStatus};
use gsv_protocol::*;

/// How long ago `then` was, for people (`3m ago`).
fn ago(now_ms: i64, then_ms: i64) -> String {
    let s = (now_ms - then_ms).max(0) / 1000;
    match s {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

fn state(status: Option<&ChannelAccountStatus>) -> String {
    match status {
        None => "no status yet".into(),
        Some(s) if s.connected => "connected".into(),
        Some(ChannelAccountStatus {
            error: Some(error), ..
        }) => format!("not connected: {error}"),
        Some(_) => "not connected".into(),
    }
}

/// One line per account.
pub fn render_channels(list: &ChannelsListResult, now: i64) -> String {
    let mut out = String::new();
    if list.channels.is_empty() {
        out.push_str("No channel accounts yet. Start one with `gsv channel start discord`.\n");
    }
    for c in &list.channels {
        let mut line = format!(
            "{}/{}  {}",
            c.channel,
            c.account_id,
            state(c.status.as_ref())
        );
        if let Some(t) = &c.transport {
            line.push_str(&format!("  via {t}"));
        }
        if let Some(at) = c.last_message_at {
            line.push_str(&format!("  last message {}", ago(now, at)));
        }
        if c.delivered > 0 {
            line.push_str(&format!(
                "  {} delivered, {} read today",
                c.delivered, c.read
            ));
        }
        if c.failed_deliveries > 0 {
            line.push_str(&format!(
                "  {} undelivered{}",
                c.failed_deliveries,
                c.last_delivery_error
                    .as_deref()
                    .map(|e| format!(" (last: {e})"))
                    .unwrap_or_default()
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    for w in &list.warnings {
        out.push_str(&format!("! {w}\n"));
    }
    out
}

pub fn render_status(r: &ChannelStatusRpcResult) -> String {
    if r.accounts.is_empty() {
        return format!("The {} channel reports no accounts.\n", r.channel);
    }
    let mut out: String = r
        .accounts
        .iter()
        .map(|a| format!("{}/{}  {}\n", r.channel, a.account_id, state(Some(a))))
        .collect();
    for u in &r.undelivered {
        out.push_str(&format!(
            "{}/{}  {} answer piece(s) not delivered{}\n",
            r.channel,
            u.account_id,
            u.count,
            u.last_error
                .as_deref()
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default()
        ));
    }
    for o in &r.owed {
        out.push_str(&format!(
            "{}/{}  owes {} answer(s) still being written, {} piece(s) waiting to be sent\n",
            r.channel, o.account_id, o.answers, o.pieces
        ));
    }
    out
}

pub fn render_pairs(r: &PairListResult, now: i64) -> String {
    if r.pairs.is_empty() {
        return "No pairing requests.\n".into();
    }
    r.pairs
        .values()
        .map(|p| {
            let who = match &p.sender_name {
                Some(name) => format!("{name} ({})", p.sender_id),
                None => p.sender_id.clone(),
            };
            format!(
                "{}  {}:{}  {who}  asked {}, expires in {}m\n",
                p.code,
                p.channel,
                p.sender_id,
                ago(now, p.requested_at),
                ((p.expires_at - now).max(0) + 59_999) / 60_000
            )
        })
        .collect()
}

/// `CODE` or `channel:senderId` as the gateway takes it.
fn decision(request: &str) -> PairDecisionParams {
    match request.split_once(':') {
        Some((channel, sender)) => PairDecisionParams {
            code: None,
            channel: Some(channel.to_string()),
            sender_id: Some(sender.to_string()),
        },
        None => PairDecisionParams {
            code: Some(request.to_string()),
            channel: None,
            sender_id: None,
        },
    }
}

pub async fn run(target: &GatewayTarget, command: ChannelCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        ChannelCommand::List { json } => {
            let render = |list: &ChannelsListResult| render_channels(list, now_ms());
            print_answer::<method::ChannelsList>(&conn, &NoParams, json, render).await?;
        }
        ChannelCommand::Start {
            channel,
            account,
            bot_token,
            phone_number_id,
            access_token,
            public_url,
        } => {
            let mut config = ChannelAccountConfig {
                bot_token,
                phone_number_id,
                access_token,
                ..Default::default()
            };
            // Telegram's webhook origin: a setting of that channel alone.
            if let Some(url) = public_url {
                config.extra.insert("publicUrl".into(), url.into());
            }
            let params = ChannelStartRpcParams {
                channel,
                account_id: account,
                config: (config != ChannelAccountConfig::default()).then_some(config),
            };
            let r = conn.call::<method::ChannelStart>(&params).await?;
            println!("Started {}/{}.", r.channel, r.account_id);
        }
        ChannelCommand::Login {
            channel,
            account,
            force,
            phone,
            timeout,
        } => {
            let params = ChannelLoginRpcParams {
                channel,
                account_id: account,
                force,
                phone_number: phone,
            };
            login(&conn, params, std::time::Duration::from_secs(timeout)).await?;
        }
        ChannelCommand::Logout { channel, account } => {
            let params = ChannelAccountParams {
                channel,
                account_id: account,
            };
            let r = conn.call::<method::ChannelLogout>(&params).await?;
            println!("Logged out {}/{}.", r.channel, r.account_id);
        }
        ChannelCommand::Stop { channel, account } => {
            let params = ChannelAccountParams {
                channel,
                account_id: account,
            };
            let r = conn.call::<method::ChannelStop>(&params).await?;
            println!("Stopped {}/{}.", r.channel, r.account_id);
        }
        ChannelCommand::Status {
            channel,
            account,
            json,
        } => {
            let params = ChannelStatusRpcParams {
                channel,
                account_id: account,
            };
            print_answer::<method::ChannelStatus>(&conn, &params, json, render_status).await?;
        }
    }
    Ok(())
}

/// A QR code's text drawn with half blocks, two rows a line (scannable
/// from most terminals).
pub fn draw_qr(text: &str) -> Option<String> {
    let code = qrcode::QrCode::new(text.as_bytes()).ok()?;
    Some(
        code.render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
    )
}

/// Asks the channel for its code until the account is linked: each new
/// QR code (WhatsApp rotates them) is drawn again.
async fn login(
    conn: &crate::connection::Connection,
    params: ChannelLoginRpcParams,
    timeout: std::time::Duration,
) -> Result<()> {
    let until = std::time::Instant::now() + timeout;
    let mut shown: Option<String> = None;
    let mut first = true;
    loop {
        let asked = ChannelLoginRpcParams {
            force: params.force && first,
            ..params.clone()
        };
        let was_first = std::mem::replace(&mut first, false);
        let r = conn.call::<method::ChannelLogin>(&asked).await?;
        if !r.ok {
            anyhow::bail!("{}/{}: {}", r.channel, r.account_id, r.message);
        }
        if r.linked {
            // Linked before this login began: say how to link anew.
            let already = match was_first && !params.force {
                true => " (already; --force links again)",
                false => "",
            };
            println!("{}/{}: {}{already}.", r.channel, r.account_id, r.message);
            return Ok(());
        }
        let code = r.qr.clone().or(r.pair_code.clone());
        if code.is_some() && code != shown {
            match (&r.qr, &r.pair_code) {
                (Some(qr), _) => match draw_qr(qr) {
                    Some(drawn) => println!("{drawn}\n{}", r.message),
                    None => println!("{}\n{qr}", r.message),
                },
                (None, Some(pair)) => println!("{}\n\n    {pair}\n", r.message),
                (None, None) => {}
            }
            shown = code;
        }
        if std::time::Instant::now() >= until {
            anyhow::bail!(
                "not linked after {}s; run the login again",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
}

pub async fn pair(target: &GatewayTarget, command: PairCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        PairCommand::List { json } => {
            let render = |r: &PairListResult| render_pairs(r, now_ms());
            print_answer::<method::PairList>(&conn, &NoParams, json, render).await?;
        }
        PairCommand::Approve { request } => {
            let r = conn
                .call::<method::PairApprove>(&decision(&request))
                .await?;
            let who = r.sender_name.as_deref().unwrap_or(&r.sender_id);
            let told = match r.notified {
                true => "they were told",
                false => "telling them failed; they can write again",
            };
            println!("Approved {who} on {} ({told}).", r.channel);
        }
        PairCommand::Reject { request } => {
            let r = conn.call::<method::PairReject>(&decision(&request)).await?;
            println!("Rejected {} on {}.", r.sender_id, r.channel);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qr_code_is_drawn_in_half_blocks() {
        let drawn = draw_qr("2@abc,def,ghi,jkl").expect("drawn");
        let lines: Vec<&str> = drawn.lines().collect();
        let width = lines[0].chars().count();
        // 17 bytes at medium error correction need a version-2 code: 25
        // modules plus a 4-module quiet zone each side, 33 columns, 33 rows
        // two to a line.
        assert_eq!((width, lines.len()), (33, 17));
        assert!(lines.iter().all(|l| l.chars().count() == width));
        assert!(lines
            .iter()
            .flat_map(|l| l.chars())
            .all(|c| matches!(c, ' ' | '█' | '▀' | '▄')));
        assert_eq!(draw_qr(&"x".repeat(8000)), None);
    }

    const NOW: i64 = 1_795_529_100_000;

    #[test]
    fn channels_render_one_line_per_account() {
        let list = ChannelsListResult {
            warnings: vec![
                "session.shareMainWith puts other people in your main session (discord:7)".into(),
            ],
            count: 3,
            channels: vec![
                ChannelRegistryEntry {
                    channel: "discord".into(),
                    account_id: "default".into(),
                    connected_at: Some(NOW - 3_600_000),
                    last_message_at: Some(NOW - 120_000),
                    transport: Some("binding".into()),
                    status: Some(ChannelAccountStatus {
                        account_id: "default".into(),
                        connected: true,
                        authenticated: true,
                        mode: None,
                        last_activity: None,
                        error: None,
                        extra: None,
                    }),
                    failed_deliveries: 1,
                    last_delivery_error: Some("Missing Access".into()),
                    delivered: 0,
                    read: 0,
                },
                ChannelRegistryEntry {
                    channel: "discord".into(),
                    account_id: "work".into(),
                    connected_at: None,
                    last_message_at: None,
                    transport: None,
                    status: Some(ChannelAccountStatus {
                        account_id: "work".into(),
                        connected: false,
                        authenticated: false,
                        mode: None,
                        last_activity: None,
                        error: Some("Discord closed with 4004: the bot token is wrong".into()),
                        extra: None,
                    }),
                    failed_deliveries: 0,
                    last_delivery_error: None,
                    delivered: 0,
                    read: 0,
                },
                ChannelRegistryEntry {
                    channel: "whatsapp".into(),
                    account_id: "default".into(),
                    connected_at: Some(NOW - 60_000),
                    last_message_at: Some(NOW - 30_000),
                    transport: Some("binding".into()),
                    status: Some(ChannelAccountStatus {
                        account_id: "default".into(),
                        connected: true,
                        authenticated: true,
                        mode: Some("webhook".into()),
                        last_activity: None,
                        error: None,
                        extra: None,
                    }),
                    failed_deliveries: 0,
                    last_delivery_error: None,
                    delivered: 3,
                    read: 2,
                },
            ],
        };
        assert_eq!(
            render_channels(&list, NOW),
            "discord/default  connected  via binding  last message 2m ago  1 undelivered (last: Missing Access)\n\
             discord/work  not connected: Discord closed with 4004: the bot token is wrong\n\
             whatsapp/default  connected  via binding  last message 30s ago  3 delivered, 2 read today\n\
             ! session.shareMainWith puts other people in your main session (discord:7)\n"
        );
        let empty = ChannelsListResult {
            count: 0,
            channels: vec![],
            warnings: vec![],
        };
        assert_eq!(
            render_channels(&empty, NOW),
            "No channel accounts yet. Start one with `gsv channel start discord`.\n"
        );
    }

    #[test]
    fn status_shows_what_was_not_delivered() {
        let r = ChannelStatusRpcResult {
            channel: "discord".into(),
            accounts: vec![ChannelAccountStatus {
                account_id: "default".into(),
                connected: true,
                authenticated: true,
                mode: None,
                last_activity: None,
                error: None,
                extra: None,
            }],
            undelivered: vec![UndeliveredPieces {
                account_id: "default".into(),
                count: 2,
                last_error: Some("Missing Permissions".into()),
            }],
            owed: vec![OwedAnswers {
                account_id: "default".into(),
                answers: 1,
                pieces: 3,
            }],
        };
        assert_eq!(
            render_status(&r),
            "discord/default  connected\n\
             discord/default  2 answer piece(s) not delivered (last: Missing Permissions)\n\
             discord/default  owes 1 answer(s) still being written, 3 piece(s) waiting to be sent\n"
        );
    }

    #[test]
    fn pairs_render_with_code_and_expiry() {
        let mut pairs = std::collections::BTreeMap::new();
        pairs.insert(
            "discord:81".to_string(),
            PendingPair {
                channel: "discord".into(),
                account_id: "default".into(),
                sender_id: "81".into(),
                sender_name: Some("Eve".into()),
                code: "K7MX4Q2P".into(),
                requested_at: NOW - 300_000,
                expires_at: NOW + 3_300_000,
            },
        );
        assert_eq!(
            render_pairs(&PairListResult { pairs }, NOW),
            "K7MX4Q2P  discord:81  Eve (81)  asked 5m ago, expires in 55m\n"
        );
    }

    #[test]
    fn a_request_is_a_code_or_an_address() {
        assert_eq!(decision("K7MX4Q2P").code.as_deref(), Some("K7MX4Q2P"));
        let d = decision("discord:81");
        assert_eq!(
            (d.channel.as_deref(), d.sender_id.as_deref(), d.code),
            (Some("discord"), Some("81"), None)
        );
    }
}
