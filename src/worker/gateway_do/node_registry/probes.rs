//! Skill bin probes on the Gateway: `node.probe` events
//! out to nodes, their `node.probe.result` merged into the node's row (so
//! `skills.status` and every run's NodeSnapshot see the bins), and
//! `skills.update` answered, with its original frame id, once every probe
//! it sent has answered, timed out or lost its node. Pending probes are
//! rows in SQLite, so they survive hibernation; the alarm times them out.
//! The decisions are in `crate::skills::probe`.

use super::store::{NewProbe, ProbeRow};
use super::Gateway;
use crate::skills::probe::{
    agents_to_probe, apply_probe_result, disconnected, plan_probes, probe_timeout_ms, timed_out,
    update_result, ProbeOutcome, DEFAULT_PROBE_TIMEOUT_MS,
};
use crate::skills::{skills_status, HostInfo, SkillsStatus};
use crate::worker::gateway_do::{to_value, Attachment};
use crate::worker::rpc::{internal_error, new_id, now_ms};
use crate::worker::workspace::prompt_load::{load_skill_files, load_skill_files_of};
use gsv_protocol::*;
use serde_json::Value;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

impl Gateway {
    /// Records a probe and sends it. A node whose socket is already gone
    /// settles it at once as disconnected. Returns whether it went out.
    fn send_probe(
        &self,
        node_id: &str,
        ws: &WebSocket,
        conn_id: &str,
        bins: &[String],
        timeout_ms: u64,
        update_id: Option<&str>,
    ) -> Res<bool> {
        let probe_id = new_id();
        self.node_store().add_probe(&NewProbe {
            probe_id: &probe_id,
            node_id,
            conn_id,
            bins,
            update_id,
            timeout_ms: timeout_ms as i64,
            deadline_at: now_ms() + timeout_ms as i64,
        })?;
        let evt = NodeProbeEvent {
            probe_id: probe_id.clone(),
            kind: PROBE_KIND_BINS.into(),
            bins: bins.to_vec(),
            timeout_ms: Some(timeout_ms),
        };
        let frame = Frame::event_json(event::NODE_PROBE, &evt).map_err(internal_error)?;
        if ws.send_with_str(&frame).is_ok() {
            return Ok(true);
        }
        self.settle(&probe_id, update_id, disconnected(node_id))?;
        Ok(false)
    }

    /// Marks a probe of an update settled (the update answers once all
    /// are); a probe nobody waits for is just forgotten.
    fn settle(&self, probe_id: &str, update_id: Option<&str>, outcome: ProbeOutcome) -> Res<()> {
        let store = self.node_store();
        match update_id {
            None => store.delete_probe(probe_id),
            Some(_) => store.settle_probe(probe_id, outcome),
        }
    }

    /// `skills.update`: probes the nodes whose bin status is stale for the
    /// agent's required bins (all of them with `force`). Answers now when
    /// there is nothing to probe; otherwise `None`, and the answer goes out
    /// later with `frame_id`.
    pub(in crate::worker::gateway_do) async fn skills_update(
        &self,
        att: &Attachment,
        frame_id: &str,
        p: SkillsUpdateParams,
    ) -> Res<Option<SkillsUpdateResult<SkillsStatus>>> {
        let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
        let files = load_skill_files(&bucket, &agent)
            .await
            .map_err(internal_error)?;
        let config = self.config.borrow().clone();
        let now = now_ms() as u64;
        let hosts = self.hosts()?;
        let status = skills_status(&agent, &files, &hosts, &config, now);
        let plan = plan_probes(&hosts, &status.required_bins, p.force == Some(true), now);
        if plan.probe.is_empty() {
            return Ok(Some(update_result(status, &[], plan.skipped)));
        }
        let update_id = new_id();
        self.node_store().add_update(
            &update_id,
            &att.conn_id,
            frame_id,
            &agent,
            &plan.skipped,
            now_ms(),
        )?;
        let timeout_ms = probe_timeout_ms(p.timeout_ms);
        for (id, node) in self.live_nodes()? {
            if plan.probe.contains(&id) {
                let bins = &status.required_bins;
                self.send_probe(
                    &id,
                    &node.ws,
                    &node.conn_id,
                    bins,
                    timeout_ms,
                    Some(&update_id),
                )?;
            }
        }
        self.schedule_alarm().await;
        // Every send may have failed already.
        self.finish_update(&update_id).await?;
        Ok(None)
    }

    /// Answers a `skills.update` once none of its probes is pending:
    /// the status re-evaluated with the fresh bins, and what each probe
    /// did. Safe to call any number of times: the first caller that finds
    /// the update complete takes it.
    async fn finish_update(&self, update_id: &str) -> Res<()> {
        let store = self.node_store();
        if store.update_pending(update_id)? {
            return Ok(());
        }
        let Some(update) = store.take_update(update_id)? else {
            return Ok(());
        };
        let outcomes: Vec<(String, ProbeOutcome)> = store
            .probes_of_update(update_id)?
            .into_iter()
            .filter_map(|row| Some((row.node_id.clone(), row.outcome()?)))
            .collect();
        store.delete_probes_of_update(update_id)?;
        let skipped: Vec<String> = serde_json::from_str(&update.skipped).unwrap_or_default();
        let answer = self
            .update_answer(&update.agent_id, &outcomes, skipped)
            .await;
        let frame = match answer {
            Ok(v) => Frame::ok(update.frame_id, v),
            Err(e) => Frame::err(update.frame_id, e),
        };
        let asker = self
            .sockets()
            .iter()
            .find(|(_, a)| a.conn_id == update.conn_id)
            .cloned();
        if let Some((ws, _)) = asker {
            let _ = ws.send_with_str(frame.to_json());
        }
        Ok(())
    }

    async fn update_answer(
        &self,
        agent: &str,
        outcomes: &[(String, ProbeOutcome)],
        skipped: Vec<String>,
    ) -> Res<Value> {
        let bucket = crate::worker::bindings::bucket(&self.env).map_err(internal_error)?;
        let files = load_skill_files(&bucket, agent)
            .await
            .map_err(internal_error)?;
        let config = self.config.borrow().clone();
        let status = skills_status(agent, &files, &self.hosts()?, &config, now_ms() as u64);
        to_value(&update_result(status, outcomes, skipped))
    }

    /// `node.probe.result`: the probed node's answer, merged into its row.
    pub(in crate::worker::gateway_do) async fn probe_result(
        &self,
        node_id: &str,
        p: NodeProbeResultParams,
    ) -> Res<AckResult> {
        let row = self.node_store().probe(&p.probe_id)?;
        // Unknown, or settled already (timed out): nobody waits for it.
        let Some(row) = row.filter(|r| r.outcome.is_none()) else {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        };
        if row.node_id != node_id {
            return Err(ErrorShape::new(
                codes::FORBIDDEN,
                format!(
                    "Probe {} was sent to node {}, not to {node_id}",
                    p.probe_id, row.node_id
                ),
            ));
        }
        let outcome = self.merge_bins(node_id, &row.bins(), &p)?;
        self.settle(&row.probe_id, row.update_id.as_deref(), outcome)?;
        if let Some(update_id) = &row.update_id {
            self.finish_update(update_id).await?;
        }
        Ok(AckResult {
            ok: true,
            dropped: None,
        })
    }

    /// Applies a probe answer to the node's stored runtime info.
    fn merge_bins(
        &self,
        node_id: &str,
        requested: &[String],
        p: &NodeProbeResultParams,
    ) -> Res<ProbeOutcome> {
        let store = self.node_store();
        let Some(row) = store.node(node_id)? else {
            return Ok(disconnected(node_id));
        };
        let mut runtime: NodeRuntimeInfo =
            serde_json::from_str(&row.runtime).map_err(internal_error)?;
        let outcome = apply_probe_result(&mut runtime, node_id, requested, p, now_ms() as u64);
        if outcome == ProbeOutcome::Updated {
            store.set_runtime(node_id, &runtime)?;
            self.revisions.nodes_changed();
        }
        Ok(outcome)
    }

    /// Probes still pending past their deadline fail as timed out.
    pub(super) async fn expire_probes(&self, now: i64) -> Res<()> {
        let due = self.node_store().due_probes(now)?;
        self.fail_probes(due, |row| timed_out(&row.node_id, row.timeout_ms as u64))
            .await
    }

    /// The node's connection closed: its pending probes fail now, not at
    /// their deadline.
    pub(super) async fn node_probes_gone(&self, node_id: &str) -> Res<()> {
        let pending = self.node_store().pending_probes(node_id)?;
        self.fail_probes(pending, |row| disconnected(&row.node_id))
            .await
    }

    async fn fail_probes(
        &self,
        rows: Vec<ProbeRow>,
        why: impl Fn(&ProbeRow) -> ProbeOutcome,
    ) -> Res<()> {
        let mut updates = Vec::new();
        for row in &rows {
            self.settle(&row.probe_id, row.update_id.as_deref(), why(row))?;
            if let Some(u) = &row.update_id {
                if !updates.contains(u) {
                    updates.push(u.clone());
                }
            }
        }
        for u in updates {
            self.finish_update(&u).await?;
        }
        Ok(())
    }

    /// A client went away: nobody waits for its updates any more; their
    /// pending probes still refresh the nodes' bins when answered.
    pub(in crate::worker::gateway_do) fn client_updates_gone(&self, conn_id: &str) -> Res<()> {
        self.node_store().client_updates_gone(conn_id)
    }

    /// A node just connected (its `hello-ok` is out): probes sent to its
    /// previous connection go to this one, and when it can run probes its
    /// bins are probed for the skills of `main`, the default agent and
    /// every `agents.list` entry, without anyone waiting.
    pub(in crate::worker::gateway_do) async fn node_connected(&self, node_id: &str) -> Res<()> {
        let Some((_, node)) = self.live_nodes()?.into_iter().find(|(id, _)| id == node_id) else {
            return Ok(());
        };
        let store = self.node_store();
        let moved = store.probes_of_old_conn(node_id, &node.conn_id)?;
        for row in moved {
            store.move_probe(&row.probe_id, &node.conn_id)?;
            let evt = NodeProbeEvent {
                probe_id: row.probe_id.clone(),
                kind: PROBE_KIND_BINS.into(),
                bins: row.bins(),
                timeout_ms: Some(row.timeout_ms as u64),
            };
            let frame = Frame::event_json(event::NODE_PROBE, &evt).map_err(internal_error)?;
            let _ = node.ws.send_with_str(&frame);
        }
        let host = crate::gateway::nodes::host_info(node_id, &node.runtime);
        if !host.can_probe_bins() {
            return Ok(());
        }
        let bins = self.required_bins_of_all_agents().await?;
        let now = now_ms() as u64;
        let hosts: [HostInfo; 1] = [host];
        if plan_probes(&hosts, &bins, false, now).probe.is_empty() {
            return Ok(());
        }
        let timeout_ms = DEFAULT_PROBE_TIMEOUT_MS;
        self.send_probe(node_id, &node.ws, &node.conn_id, &bins, timeout_ms, None)?;
        self.schedule_alarm().await;
        Ok(())
    }

    /// The union of the required bins of every agent a node is probed for.
    async fn required_bins_of_all_agents(&self) -> Res<Vec<String>> {
        let agents = {
            let routing = self.routing.borrow();
            agents_to_probe(
                &routing.default_agent_id,
                routing.agents.iter().map(|a| a.id.as_str()),
            )
        };
        let bucket = crate::worker::bindings::bucket(&self.env).map_err(internal_error)?;
        let per_agent = load_skill_files_of(&bucket, &agents)
            .await
            .map_err(internal_error)?;
        let config = self.config.borrow().clone();
        let now = now_ms() as u64;
        let mut bins: Vec<String> = per_agent
            .iter()
            .flat_map(|(agent, files)| skills_status(agent, files, &[], &config, now).required_bins)
            .collect();
        bins.sort_unstable();
        bins.dedup();
        Ok(bins)
    }
}
