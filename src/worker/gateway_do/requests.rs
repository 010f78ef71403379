//! Request frames: `connect` first, then who may call what, then one
//! handler per method. The match in `dispatch` is over the protocol's
//! method table (`gsv_protocol::ClientRequest`), so a method added there
//! does not compile until it has its arm here.

use super::{to_value, workspace_rpc, Attachment, Gateway, Peer};
use crate::calls::{Abort, Get, History, Preview, Reset, Stats};
use crate::skills::skills_status;
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::{internal_error, now_ms};
use crate::worker::workspace::prompt_load;
use gsv_protocol::method::{self, Method};
use gsv_protocol::*;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::value::RawValue;
use std::rc::Rc;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// How a request is answered.
pub(super) enum Reply {
    /// Now, with this payload (written as JSON already).
    Now(Box<RawValue>),
    /// Later, with the request's frame id (`tool.invoke` and `logs.get`
    /// when the node answers, `skills.update` when its probes have).
    Later,
}

/// `M`'s answer; the type ties each arm to its method's result.
fn now<M: Method>(result: M::Result) -> Res<Reply> {
    serde_json::value::to_raw_value(&result)
        .map(Reply::Now)
        .map_err(internal_error)
}

/// A value the gateway holds in a richer type than the protocol names
/// (the skills status), read as the protocol's type.
fn recast<T: Serialize, U: DeserializeOwned>(v: &T) -> Res<U> {
    serde_json::from_value(to_value(v)?).map_err(internal_error)
}

impl Gateway {
    /// The answer to a request frame. The checks go in v1's order: a
    /// second `connect`, no `connect` yet, the method and the caller's
    /// mode, and only then the params.
    /// `att`: the socket's attachment as the message found it.
    pub(super) async fn handle_request(
        &self,
        ws: &WebSocket,
        att: worker::Result<Option<Rc<Attachment>>>,
        req: RequestFrame,
    ) -> Res<Reply> {
        let mut att = att.map_err(internal_error)?.unwrap_or_default();
        if req.method == method::Connect::NAME {
            if att.peer.is_some() {
                return Err(already_connected());
            }
            let p = parse_params::<method::Connect>(req.params)?;
            return now::<method::Connect>(self.handle_connect(ws, Rc::make_mut(&mut att), p)?);
        }
        let Some(peer) = att.peer.clone() else {
            return Err(ErrorShape::new(
                codes::NOT_CONNECTED,
                "Not connected: send a connect request first",
            ));
        };
        authorize(peer.mode, &req.method)?;
        let request = ClientRequest::parse(&req.method, req.params)?;
        self.dispatch(ws, att, peer, &req.id, request).await
    }

    async fn dispatch(
        &self,
        ws: &WebSocket,
        mut att: Rc<Attachment>,
        peer: Peer,
        frame_id: &str,
        request: ClientRequest,
    ) -> Res<Reply> {
        use ClientRequest as R;
        let node = peer.client_id.as_str();
        match request {
            // `authorize` refuses it first; kept for the match to be whole.
            R::Connect(_) => Err(already_connected()),
            R::ChatSend(p) => now::<method::ChatSend>(self.chat_send(ws, &mut att, p).await?),
            R::ChatAbort(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, None, Abort);
                now::<method::ChatAbort>(r.await?)
            }
            R::ConfigGet(p) => now::<method::ConfigGet>(self.config_get(p)?),
            R::ConfigSet(p) => {
                let r = self.config_set(p)?;
                // Heartbeat settings may have changed.
                self.wake().await;
                now::<method::ConfigSet>(r)
            }
            R::SessionGet(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, None, Get);
                now::<method::SessionGet>(r.await?)
            }
            R::SessionPreview(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, p.limit, Preview);
                now::<method::SessionPreview>(r.await?)
            }
            R::SessionsList(p) => now::<method::SessionsList>(self.sessions_list(p)?),
            R::SessionStats(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, None, Stats);
                now::<method::SessionStats>(r.await?)
            }
            R::UsageDaily(p) => now::<method::UsageDaily>(self.usage_daily(p).await?),
            R::ModelCheck(p) => now::<method::ModelCheck>(self.model_check(p).await),
            R::SessionHistory(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, None, History);
                now::<method::SessionHistory>(r.await?)
            }
            R::SessionPatch(p) => now::<method::SessionPatch>(self.session_patch(p).await?),
            R::SessionCompact(mut p) => {
                p.session_key = self.canonical_key(&p.session_key);
                let session = SessionStub::for_key(&self.env, &p.session_key);
                now::<method::SessionCompact>(session.call(&p).await?)
            }
            R::SessionReset(p) => {
                let r = self.session_query(ws, &mut att, p.session_key, None, Reset);
                now::<method::SessionReset>(r.await?)
            }
            R::SessionTranscript(mut p) => {
                p.session_key = self.canonical_key(&p.session_key);
                let session = SessionStub::for_key(&self.env, &p.session_key);
                now::<method::SessionTranscript>(session.call(&p).await?)
            }
            R::SkillsStatus(p) => {
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                let files = prompt_load::load_skill_files(&bucket, &agent)
                    .await
                    .map_err(internal_error)?;
                let config = self.config.borrow().clone();
                let status =
                    skills_status(&agent, &files, &self.hosts()?, &config, now_ms() as u64);
                now::<method::SkillsStatus>(recast(&status)?)
            }
            R::SkillsUpdate(p) => match self.skills_update(&att, frame_id, p).await? {
                Some(result) => now::<method::SkillsUpdate>(recast(&result)?),
                None => Ok(Reply::Later),
            },
            R::WorkspaceList(p) => {
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                now::<method::WorkspaceList>(workspace_rpc::list(&bucket, &agent, p).await?)
            }
            R::WorkspaceRead(p) => {
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                now::<method::WorkspaceRead>(workspace_rpc::read(&bucket, &agent, p).await?)
            }
            R::WorkspaceWrite(p) => {
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                now::<method::WorkspaceWrite>(workspace_rpc::write(&bucket, &agent, p).await?)
            }
            R::WorkspaceDelete(p) => {
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                now::<method::WorkspaceDelete>(workspace_rpc::delete(&bucket, &agent, p).await?)
            }
            R::WorkspaceRefresh(_) => now::<method::WorkspaceRefresh>(self.workspace_refresh()),
            R::ToolsList(_) => now::<method::ToolsList>(self.tools_list()?),
            R::ToolInvoke(p) => {
                self.tool_invoke(&att, frame_id, p).await?;
                Ok(Reply::Later)
            }
            R::ToolResult(p) => now::<method::ToolResult>(self.tool_result(node, p).await?),
            R::ToolRequest(p) => now::<method::ToolRequest>(self.client_tool_request(p).await?),
            R::LogsGet(p) => {
                self.logs_get(&att, frame_id, p).await?;
                Ok(Reply::Later)
            }
            R::LogsResult(p) => now::<method::LogsResult>(self.logs_result(node, p).await?),
            R::NodeExecEvent(p) => now::<method::NodeExecEvent>(self.exec_event(node, p).await?),
            R::NodeProbeResult(p) => {
                now::<method::NodeProbeResult>(self.probe_result(node, p).await?)
            }
            R::TransferStatus(p) => {
                now::<method::TransferStatus>(self.transfer_status(node, p).await?)
            }
            R::ChannelsList(_) => now::<method::ChannelsList>(self.channels_list().await?),
            R::ChannelInbound(p) => {
                // A channel socket speaks for its own channel only.
                let own = node.split(':').next().unwrap_or_default();
                if crate::routing::normalize::normalize_channel(&p.channel) != own {
                    return Err(ErrorShape::new(
                        codes::FORBIDDEN,
                        format!("This connection is the {own} channel, not {}", p.channel),
                    ));
                }
                now::<method::ChannelInbound>(self.channel_inbound(p).await?)
            }
            R::ChannelStart(p) => now::<method::ChannelStart>(self.channel_start(p).await?),
            R::ChannelStop(p) => now::<method::ChannelStop>(self.channel_end(p, false).await?),
            R::ChannelStatus(p) => now::<method::ChannelStatus>(self.channel_status(p).await?),
            R::ChannelLogin(p) => now::<method::ChannelLogin>(self.channel_login(p).await?),
            R::ChannelLogout(p) => now::<method::ChannelLogout>(self.channel_end(p, true).await?),
            R::PairList(_) => now::<method::PairList>(self.pair_list()?),
            R::PairApprove(p) => now::<method::PairApprove>(self.pair_approve(p).await?),
            R::PairReject(p) => now::<method::PairReject>(self.pair_reject(p)?),
            R::CronStatus(_) => now::<method::CronStatus>(self.cron_status()?),
            R::CronList(p) => now::<method::CronList>(self.cron_list(p)?),
            R::CronAdd(p) => {
                // A client holds the token: the owner's job.
                let r = self.cron_add(p, Default::default())?;
                self.schedule_alarm().await;
                now::<method::CronAdd>(r)
            }
            R::CronUpdate(p) => {
                let r = self.cron_update(p)?;
                self.schedule_alarm().await;
                now::<method::CronUpdate>(r)
            }
            R::CronRemove(p) => {
                let r = self.cron_remove(p)?;
                self.schedule_alarm().await;
                now::<method::CronRemove>(r)
            }
            R::CronRun(p) => now::<method::CronRun>(self.cron_run(p).await?),
            R::CronRuns(p) => now::<method::CronRuns>(self.cron_runs(p)?),
            R::HeartbeatStatus(_) => now::<method::HeartbeatStatus>(self.heartbeat_status()?),
            R::HeartbeatStart(_) => now::<method::HeartbeatStart>(self.heartbeat_start().await?),
            R::HeartbeatTrigger(p) => {
                now::<method::HeartbeatTrigger>(self.heartbeat_trigger(p).await?)
            }
            R::MemorySearch(p) => now::<method::MemorySearch>(self.memory_search(p).await?),
            R::MemoryGet(p) => now::<method::MemoryGet>(self.memory_get(p).await?),
            R::MemoryPut(p) => now::<method::MemoryPut>(self.memory_put(p).await?),
            R::MemoryDelete(p) => now::<method::MemoryDelete>(self.memory_delete(p).await?),
            R::MemoryStatus(_) => now::<method::MemoryStatus>(self.memory_status().await?),
            R::MemoryRepair(_) => now::<method::MemoryRepair>(self.memory_repair().await?),
            R::TrustExplain(p) => now::<method::TrustExplain>(self.trust_explain(p).await?),
            R::AuditList(p) => now::<method::AuditList>(self.audit_list(p)?),
            R::ApprovalsList(_) => now::<method::ApprovalsList>(self.approvals_list()?),
            R::ApprovalsDecide(p) => {
                now::<method::ApprovalsDecide>(self.approvals_decide(p).await?)
            }
        }
    }
}
