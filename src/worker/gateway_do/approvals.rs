//! Asking the owner (`tools.policy.*.ask`): a session's call waits here
//! until the owner approves or denies it (in their own chat with
//! `approve CODE` / `deny CODE`, with `gsv approvals`, in the web UI) or
//! `tools.policy.askTimeoutSeconds` passes; then the session hears the
//! decision. "Approve always" keeps a standing approval for that person
//! (or group) and tool. Every decision goes to the audit log.

use super::Gateway;
use crate::channels::pairing;
use crate::session::internal::{ApprovalDecided, AskApproval, AskReply, AuditRecord};
use crate::trust::approvals::{decided_text, parse_reply, request_actions, request_text};
use crate::trust::explain::args_digest;
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::{internal_error, now_ms};
use gsv_protocol::channels::{ChannelAction, ChannelPeer};
use gsv_protocol::*;
use serde::Deserialize;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

pub(super) const MIGRATION: &str = "
    CREATE TABLE approvals (code TEXT PRIMARY KEY, session_key TEXT NOT NULL, call_id TEXT NOT NULL,
        approval TEXT NOT NULL, expires_at INTEGER NOT NULL);
    CREATE TABLE standing_approvals (who TEXT NOT NULL, tool TEXT NOT NULL, at_ms INTEGER NOT NULL,
        PRIMARY KEY (who, tool));
    CREATE TABLE owner_chat (id INTEGER PRIMARY KEY CHECK (id = 1), channel TEXT NOT NULL,
        account_id TEXT NOT NULL, peer TEXT NOT NULL)";

const DEFAULT_ASK_TIMEOUT_S: i64 = 300;

#[derive(Deserialize)]
struct Row {
    code: String,
    session_key: String,
    call_id: String,
    approval: String,
}

#[derive(Deserialize)]
struct OwnerChat {
    channel: String,
    account_id: String,
    peer: String,
}

/// A standing approval is per person, or per session where nobody is
/// one person (a group).
fn asker_key(who: Option<&str>, session_key: &str) -> String {
    who.map_or_else(|| format!("session:{session_key}"), |w| format!("who:{w}"))
}

impl Gateway {
    fn ask_timeout_s(&self) -> i64 {
        self.config
            .borrow()
            .u64_at("tools.policy.askTimeoutSeconds")
            .map_or(DEFAULT_ASK_TIMEOUT_S, |s| s as i64)
    }

    /// A session's call of an `ask` tool: approved now by a standing
    /// approval, else stored and put to the owner.
    pub(super) async fn ask_approval(&self, a: AskApproval) -> Res<AskReply> {
        let sql = self.sql();
        let asker = asker_key(a.who.as_deref(), &a.session_key);
        #[derive(Deserialize)]
        struct N {
            n: i64,
        }
        let standing =
            sql.exec(
                "SELECT COUNT(*) AS n FROM standing_approvals WHERE who = ? AND tool = ?",
                vec![asker.as_str().into(), a.tool.as_str().into()],
            )
            .and_then(|c| c.one::<N>())
            .map_err(internal_error)?
            .n > 0;
        let now = now_ms();
        if standing {
            self.audit_decision(&a, now, "approved", "a standing approval (approve always)")?;
            return Ok(AskReply::Approved);
        }
        // The same call asked again (the session retried): one request.
        let existing: Vec<Row> = sql
            .exec(
                "SELECT code, session_key, call_id, approval FROM approvals WHERE call_id = ?",
                vec![a.call_id.as_str().into()],
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        if !existing.is_empty() {
            return Ok(AskReply::Pending);
        }
        let mut random = [0u8; pairing::CODE_LEN];
        random.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..pairing::CODE_LEN]);
        let timeout_s = self.ask_timeout_s();
        let approval = Approval {
            code: pairing::code_from(random),
            session_key: a.session_key.clone(),
            who: a.who.clone(),
            trust: a.trust,
            tool: a.tool.clone(),
            args: a.args.clone(),
            created_at_ms: now,
            expires_at_ms: now + timeout_s * 1000,
        };
        let json = serde_json::to_string(&approval).map_err(internal_error)?;
        sql.exec(
            "INSERT INTO approvals (code, session_key, call_id, approval, expires_at) VALUES (?, ?, ?, ?, ?)",
            vec![
                approval.code.as_str().into(),
                a.session_key.as_str().into(),
                a.call_id.as_str().into(),
                json.into(),
                approval.expires_at_ms.into(),
            ],
        )
        .map_err(internal_error)?;
        self.audit_decision(&a, now, "asked", "waiting for the owner")?;
        self.schedule_alarm().await;
        self.tell_owner(
            &format!("approval:{}", approval.code),
            &request_text(&approval, timeout_s),
            &request_actions(&approval.code),
        )
        .await?;
        Ok(AskReply::Pending)
    }

    pub(super) fn approvals_list(&self) -> Res<ApprovalsListResult> {
        let rows: Vec<Row> = self
            .sql()
            .exec(
                "SELECT code, session_key, call_id, approval FROM approvals ORDER BY expires_at",
                None,
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        Ok(ApprovalsListResult {
            approvals: rows
                .iter()
                .filter_map(|r| serde_json::from_str(&r.approval).ok())
                .collect(),
        })
    }

    /// `approvals.decide` (the CLI, the web UI).
    pub(super) async fn approvals_decide(
        &self,
        p: ApprovalDecideParams,
    ) -> Res<ApprovalDecideResult> {
        self.decide(&p.code.trim().to_ascii_uppercase(), p.approve, p.always, "")
            .await
    }

    /// Decides approval `code` once: the row goes, the session hears it,
    /// the audit log keeps it. `reason` explains a denial to the model.
    async fn decide(
        &self,
        code: &str,
        approve: bool,
        always: bool,
        reason: &str,
    ) -> Res<ApprovalDecideResult> {
        let sql = self.sql();
        let rows: Vec<Row> = sql
            .exec(
                "SELECT code, session_key, call_id, approval FROM approvals WHERE code = ?",
                vec![code.into()],
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        let Some(row) = rows.into_iter().next() else {
            return Err(ErrorShape::new(
                codes::NOT_FOUND,
                format!("no approval {code} is waiting (decided already, or timed out)"),
            ));
        };
        let approval: Approval = serde_json::from_str(&row.approval).map_err(internal_error)?;
        let now = now_ms();
        sql.exec(
            "DELETE FROM approvals WHERE code = ?",
            vec![row.code.as_str().into()],
        )
        .map_err(internal_error)?;
        if approve && always {
            let asker = asker_key(approval.who.as_deref(), &approval.session_key);
            sql.exec(
                "INSERT INTO standing_approvals (who, tool, at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                vec![asker.into(), approval.tool.as_str().into(), now.into()],
            )
            .map_err(internal_error)?;
        }
        let decision = match (approve, always) {
            (true, true) => "approved always",
            (true, false) => "approved",
            (false, _) => "denied",
        };
        let why = match reason.is_empty() {
            true => "the owner denied it".to_string(),
            false => reason.to_string(),
        };
        let ask = AskApproval {
            session_key: approval.session_key.clone(),
            call_id: row.call_id.clone(),
            tool: approval.tool.clone(),
            args: approval.args.clone(),
            who: approval.who.clone(),
            trust: approval.trust,
        };
        let logged = match reason.is_empty() {
            true => decision,
            false => "timed out",
        };
        self.audit_decision(&ask, now, logged, "the owner's decision")?;
        let told = ApprovalDecided {
            call_id: row.call_id,
            approved: approve,
            reason: why,
        };
        if let Err(e) = SessionStub::for_key(&self.env, &row.session_key)
            .call(&told)
            .await
        {
            console_error!(
                "gateway: telling a session of a decision failed: {}",
                e.message
            );
        }
        Ok(ApprovalDecideResult {
            approval,
            decision: logged.to_string(),
        })
    }

    /// Denies what waited past its time.
    pub(super) async fn expire_approvals(&self, now: i64) {
        let due: Vec<Row> = match self
            .sql()
            .exec(
                "SELECT code, session_key, call_id, approval FROM approvals WHERE expires_at <= ?",
                vec![now.into()],
            )
            .and_then(|c| c.to_array())
        {
            Ok(rows) => rows,
            Err(e) => {
                console_error!("gateway: reading approvals failed: {e}");
                return;
            }
        };
        let reason = format!("the owner did not answer within {} s", self.ask_timeout_s());
        for row in due {
            if let Err(e) = self.decide(&row.code, false, false, &reason).await {
                console_error!(
                    "gateway: expiring approval {} failed: {}",
                    row.code,
                    e.message
                );
            }
        }
    }

    /// When the first waiting approval times out.
    pub(super) fn approvals_deadline(&self) -> Option<f64> {
        #[derive(Deserialize)]
        struct Next {
            at: Option<f64>,
        }
        self.sql()
            .exec("SELECT MIN(expires_at) AS at FROM approvals", None)
            .and_then(|c| c.one::<Next>())
            .ok()
            .and_then(|n| n.at)
    }

    /// The owner wrote from one of their identities: approval requests go
    /// to this chat from now on.
    pub(super) fn note_owner_chat(&self, channel: &str, account_id: &str, peer: &ChannelPeer) {
        let peer = serde_json::to_string(peer).unwrap_or_default();
        let result = self.sql().exec(
            "INSERT INTO owner_chat (id, channel, account_id, peer) VALUES (1, ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET channel = excluded.channel, account_id = excluded.account_id, peer = excluded.peer",
            vec![channel.into(), account_id.into(), peer.into()],
        );
        if let Err(e) = result {
            console_error!("gateway: keeping the owner's chat failed: {e}");
        }
    }

    pub(super) fn owner_chat(&self) -> Res<Option<(String, String, ChannelPeer)>> {
        let rows: Vec<OwnerChat> = self
            .sql()
            .exec(
                "SELECT channel, account_id, peer FROM owner_chat WHERE id = 1",
                None,
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        Ok(rows.into_iter().next().and_then(|r| {
            let peer = serde_json::from_str(&r.peer).ok()?;
            Some((r.channel, r.account_id, peer))
        }))
    }

    /// A stranger asked to pair: the owner hears of it in their chat, with
    /// the answers as buttons where the chat app has them.
    pub(super) async fn tell_owner_of_pair(&self, pair: &pairing::PendingPair) {
        let told = self
            .tell_owner(
                &format!("pair-notice:{}:{}", pair.address(), pair.created_at_ms),
                &pairing::owner_notice(pair),
                &pairing::owner_actions(&pair.code),
            )
            .await;
        if let Err(e) = told {
            console_error!("gateway: reading the owner's chat failed: {}", e.message);
        }
    }

    /// `text` (and its buttons) to the chat the owner last wrote from, if
    /// any; a send that fails is logged, not the caller's failure (the
    /// request stands, and the owner can answer it elsewhere).
    async fn tell_owner(&self, source: &str, text: &str, actions: &[ChannelAction]) -> Res<()> {
        let Some((channel, account_id, peer)) = self.owner_chat()? else {
            return Ok(());
        };
        let sent = self
            .send_message(
                &channel,
                &account_id,
                &peer,
                source,
                text,
                None,
                &[],
                actions,
            )
            .await;
        if let Err(e) = sent {
            console_error!("gateway: telling the owner failed: {}", e.message);
        }
        Ok(())
    }

    /// The owner's answer to a pairing request, given in their chat.
    async fn decide_pair(&self, approve: bool, code: String) -> String {
        let p = PairDecisionParams {
            code: Some(code),
            channel: None,
            sender_id: None,
        };
        let decided = match approve {
            true => self.pair_approve(p).await.map(|r| {
                let who = format!("{}:{}", r.channel, r.sender_id);
                match r.sender_name {
                    Some(name) => format!("Approved {name} ({who}): they can talk with me now."),
                    None => format!("Approved {who}: they can talk with me now."),
                }
            }),
            false => self
                .pair_reject(p)
                .map(|r| format!("Rejected {}:{}.", r.channel, r.sender_id)),
        };
        decided.unwrap_or_else(|e| e.message)
    }

    /// An owner's DM that is an answer to an approval request: decided,
    /// and the owner's confirmation (or why not) to send back; `None` for
    /// any other message.
    pub(super) async fn owner_reply(&self, text: &str) -> Option<String> {
        if let Some((approve, code)) = pairing::parse_owner_reply(text) {
            return Some(self.decide_pair(approve, code).await);
        }
        let reply = parse_reply(text)?;
        Some(
            match self
                .decide(&reply.code, reply.approve, reply.always, "")
                .await
            {
                Ok(r) => decided_text(&r.approval, &r.decision),
                Err(e) => e.message,
            },
        )
    }

    fn audit_decision(&self, a: &AskApproval, at_ms: i64, decision: &str, rule: &str) -> Res<()> {
        let args = serde_json::to_string(&a.args).unwrap_or_default();
        self.audit_record(AuditRecord {
            entry: AuditEntry {
                at_ms,
                session_key: a.session_key.clone(),
                who: a.who.clone(),
                trust: a.trust,
                tool: a.tool.clone(),
                args_digest: args_digest(&args),
                decision: decision.to_string(),
                rule: rule.to_string(),
            },
        })
        .map(|_| ())
    }
}
