//! `gsv__Transfer` through the Gateway: a node sends a file as binary
//! frames (4-byte transfer id + chunk); the Gateway forwards them to the
//! destination node, or collects them for R2 and stores the file only once
//! its size and SHA-256 match. A file from R2 is streamed to a node the
//! same way. The Session's call gets its result when the copy is in place
//! or has failed; a failed copy leaves no file behind on either side.
//!
//! Transfers live in memory: one in progress keeps the object busy, and a
//! transfer cut by an eviction ends as the call's timeout.

use super::Gateway;
use crate::gateway::transfer::{
    plan, Endpoint, TransferArgs, TransferRequest, TransferResult, DEFAULT_MAX_TRANSFER_BYTES,
};
use crate::session::internal::TransferReply;
use crate::worker::bindings::{self, SessionStub};
use crate::worker::gateway_do::to_value;
use crate::worker::rpc::internal_error;
use crate::workspace::paths::write_key;
use gsv_protocol::transfer::*;
use gsv_protocol::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

pub(super) struct Transfer {
    call_id: String,
    session_key: String,
    source: Endpoint,
    destination: Endpoint,
    /// The R2 key when the destination is the workspace.
    dest_key: Option<String>,
    /// The destination node's socket, resolved once: chunks are forwarded
    /// on it (a node that reconnects ends the transfer anyway).
    dest_ws: Option<WebSocket>,
    size: Option<u64>,
    received: u64,
    hasher: Sha256,
    /// The file, when it goes to R2.
    buffer: Vec<u8>,
    max_bytes: u64,
}

impl Gateway {
    fn max_transfer_bytes(&self) -> u64 {
        self.config
            .borrow()
            .u64_at("tools.maxTransferBytes")
            .unwrap_or(DEFAULT_MAX_TRANSFER_BYTES)
    }

    /// Starts the transfer a Session asked for; its result comes later.
    pub(in crate::worker::gateway_do) async fn start_transfer(
        &self,
        req: TransferRequest,
    ) -> Res<TransferReply> {
        let (source, destination) = plan(&TransferArgs {
            source: req.source.clone(),
            destination: req.destination.clone(),
        })
        .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.to_string()))?;
        let bucket = bindings::bucket(&self.env).map_err(internal_error)?;
        if let Endpoint::Node { node_id, .. } = &source {
            self.node_socket(node_id)?;
        }
        let (dest_key, dest_ws) = match &destination {
            Endpoint::Workspace(p) => (Some(write_key(&req.agent_id, p)), None),
            Endpoint::Node { node_id, .. } => (None, Some(self.node_socket(node_id)?)),
        };
        let id = self.nodes.next_transfer.get().wrapping_add(1).max(1);
        self.nodes.next_transfer.set(id);
        let max_bytes = self.max_transfer_bytes();
        let transfer = Transfer {
            call_id: req.call_id,
            session_key: req.session_key,
            source: source.clone(),
            destination,
            dest_key,
            dest_ws,
            size: None,
            received: 0,
            hasher: Sha256::new(),
            buffer: Vec::new(),
            max_bytes,
        };
        self.nodes.transfers.borrow_mut().insert(id, transfer);
        match &source {
            Endpoint::Node { node_id, path } => {
                let evt = TransferSendEvent {
                    transfer_id: id,
                    path: path.clone(),
                    max_bytes,
                };
                self.send_event(node_id, event::TRANSFER_SEND, &evt)?;
            }
            Endpoint::Workspace(p) => {
                // Our own reads: the agent's copy (skills fall back to global).
                let key = crate::workspace::paths::read_candidates(&req.agent_id, p);
                let mut found = None;
                for (k, _) in key {
                    if let Some(obj) = bucket.get(&k).execute().await.map_err(internal_error)? {
                        found = Some(obj);
                        break;
                    }
                }
                let Some(obj) = found else {
                    self.nodes.transfers.borrow_mut().remove(&id);
                    return Err(ErrorShape::new(
                        codes::NOT_FOUND,
                        format!("source: gsv:{} does not exist", p.as_str()),
                    ));
                };
                let bytes = match obj.body() {
                    Some(b) => b.bytes().await.map_err(internal_error)?,
                    None => Vec::new(),
                };
                self.stream_from_r2(id, bytes).await?;
            }
        }
        Ok(TransferReply::Started { transfer_id: id })
    }

    fn node_socket(&self, node_id: &str) -> Res<WebSocket> {
        self.live_node_socket(node_id).ok_or_else(|| {
            ErrorShape::new(
                codes::UNAVAILABLE,
                format!("Node {node_id} is not connected"),
            )
        })
    }

    fn send_event<T: serde::Serialize>(&self, node_id: &str, name: &str, payload: &T) -> Res<()> {
        let ws = self.node_socket(node_id)?;
        let frame = Frame::event_json(name, payload).map_err(internal_error)?;
        ws.send_with_str(&frame).map_err(internal_error)
    }

    /// Sends an R2 file to the destination node.
    async fn stream_from_r2(&self, id: u32, bytes: Vec<u8>) -> Res<()> {
        let (node_id, path, max) = match self.nodes.transfers.borrow().get(&id) {
            Some(Transfer {
                destination: Endpoint::Node { node_id, path },
                max_bytes,
                ..
            }) => (node_id.clone(), path.clone(), *max_bytes),
            _ => return Ok(()),
        };
        if bytes.len() as u64 > max {
            let msg = format!(
                "the file has {} bytes; the limit is {max} (tools.maxTransferBytes)",
                bytes.len()
            );
            self.nodes.transfers.borrow_mut().remove(&id);
            return Err(ErrorShape::new(codes::PAYLOAD_TOO_LARGE, msg));
        }
        let ws = self.node_socket(&node_id)?;
        let receive = TransferReceiveEvent {
            transfer_id: id,
            path,
            size: bytes.len() as u64,
        };
        self.send_event(&node_id, event::TRANSFER_RECEIVE, &receive)?;
        for chunk in bytes.chunks(CHUNK_BYTES) {
            ws.send_with_bytes(frame(id, chunk))
                .map_err(internal_error)?;
        }
        let end = TransferEndEvent {
            transfer_id: id,
            sha256: hex(&Sha256::digest(&bytes)),
        };
        if let Some(t) = self.nodes.transfers.borrow_mut().get_mut(&id) {
            t.size = Some(bytes.len() as u64);
            t.received = bytes.len() as u64;
        }
        self.send_event(&node_id, event::TRANSFER_END, &end)
    }

    /// A chunk from a source node: forwarded, or kept for R2.
    pub(in crate::worker::gateway_do) fn transfer_chunk(
        &self,
        node_id: &str,
        bytes: &[u8],
    ) -> Res<()> {
        let Some((id, chunk)) = split_frame(bytes) else {
            return Err(ErrorShape::new(
                codes::BAD_REQUEST,
                "binary frame shorter than its 4-byte transfer id",
            ));
        };
        let mut transfers = self.nodes.transfers.borrow_mut();
        let Some(t) = transfers.get_mut(&id) else {
            return Err(ErrorShape::new(
                codes::NOT_FOUND,
                format!("no transfer {id} is in progress"),
            ));
        };
        if !matches!(&t.source, Endpoint::Node { node_id: n, .. } if n == node_id) {
            return Err(ErrorShape::new(
                codes::FORBIDDEN,
                format!("transfer {id} is not sent by node {node_id}"),
            ));
        }
        t.received += chunk.len() as u64;
        if t.received > t.size.unwrap_or(0) {
            drop(transfers);
            self.abort_transfer(id, "the source sent more bytes than it announced");
            return Ok(());
        }
        t.hasher.update(chunk);
        match &t.dest_ws {
            Some(ws) => {
                let _ = ws.send_with_bytes(bytes);
            }
            None => t.buffer.extend_from_slice(chunk),
        }
        Ok(())
    }

    /// `transfer.status` from a node taking part in a transfer.
    pub(in crate::worker::gateway_do) async fn transfer_status(
        &self,
        node_id: &str,
        p: TransferStatusParams,
    ) -> Res<AckResult> {
        let id = p.transfer_id;
        let role = {
            let transfers = self.nodes.transfers.borrow();
            let Some(t) = transfers.get(&id) else {
                return Ok(AckResult {
                    ok: true,
                    dropped: Some(true),
                });
            };
            let is = |e: &Endpoint| matches!(e, Endpoint::Node { node_id: n, .. } if n == node_id);
            (is(&t.source), is(&t.destination))
        };
        match (p.state, role) {
            (TransferState::Failed, (true, _) | (_, true)) => {
                let error = p.error.unwrap_or_else(|| "the node gave no reason".into());
                self.abort_transfer(id, &format!("node {node_id}: {error}"));
            }
            (TransferState::Sending, (true, _)) => self.source_sending(id, p.size.unwrap_or(0))?,
            (TransferState::Sent, (true, _)) => {
                self.source_sent(id, p.sha256.unwrap_or_default()).await?
            }
            (TransferState::Done, (_, true)) => {
                let Some(t) = self.nodes.transfers.borrow_mut().remove(&id) else {
                    return Ok(AckResult {
                        ok: true,
                        dropped: Some(true),
                    });
                };
                let sha = p.sha256.unwrap_or_default();
                let result = TransferResult {
                    source: t.source.describe(),
                    destination: t.destination.describe(),
                    bytes: p.size.unwrap_or(t.received),
                    sha256: sha,
                };
                self.finish(t, Ok(to_value(&result)?)).await;
            }
            _ => {
                return Err(ErrorShape::new(
                    codes::BAD_REQUEST,
                    format!(
                        "transfer {id}: {:?} is not expected from node {node_id}",
                        p.state
                    ),
                ))
            }
        }
        Ok(AckResult {
            ok: true,
            dropped: None,
        })
    }

    fn source_sending(&self, id: u32, size: u64) -> Res<()> {
        let (dest, max) = {
            let mut transfers = self.nodes.transfers.borrow_mut();
            let Some(t) = transfers.get_mut(&id) else {
                return Ok(());
            };
            t.size = Some(size);
            (t.destination.clone(), t.max_bytes)
        };
        if size > max {
            self.abort_transfer(
                id,
                &format!("the file has {size} bytes; the limit is {max} (tools.maxTransferBytes)"),
            );
            return Ok(());
        }
        if let Endpoint::Node { node_id, path } = dest {
            let evt = TransferReceiveEvent {
                transfer_id: id,
                path,
                size,
            };
            if let Err(e) = self.send_event(&node_id, event::TRANSFER_RECEIVE, &evt) {
                self.abort_transfer(id, &e.message);
            }
        }
        Ok(())
    }

    async fn source_sent(&self, id: u32, sha256: String) -> Res<()> {
        let check = {
            let transfers = self.nodes.transfers.borrow();
            let Some(t) = transfers.get(&id) else {
                return Ok(());
            };
            let ours = hex(&t.hasher.clone().finalize());
            if Some(t.received) != t.size {
                Err(format!(
                    "received {} of {} bytes",
                    t.received,
                    t.size.unwrap_or(0)
                ))
            } else if ours != sha256 {
                Err(format!(
                    "checksum mismatch: the source says {sha256}, the gateway got {ours}"
                ))
            } else {
                Ok(t.destination.clone())
            }
        };
        match check {
            Err(e) => self.abort_transfer(id, &e),
            Ok(Endpoint::Node { node_id, .. }) => {
                let evt = TransferEndEvent {
                    transfer_id: id,
                    sha256,
                };
                if let Err(e) = self.send_event(&node_id, event::TRANSFER_END, &evt) {
                    self.abort_transfer(id, &e.message);
                }
            }
            Ok(Endpoint::Workspace(_)) => {
                let Some(mut t) = self.nodes.transfers.borrow_mut().remove(&id) else {
                    return Ok(());
                };
                let key = t.dest_key.clone().unwrap_or_default();
                let bucket = bindings::bucket(&self.env).map_err(internal_error)?;
                // The file moves into the request body, not a copy of it.
                let body = std::mem::take(&mut t.buffer);
                let put = bucket.put(&key, body).execute().await;
                let outcome = match put {
                    Ok(_) => {
                        // A workspace file: the revision moves, and the
                        // links hear of it before the result goes out.
                        crate::worker::r2::wrote(&bucket, &key);
                        self.tell_links_of_workspace();
                        to_value(&TransferResult {
                            source: t.source.describe(),
                            destination: t.destination.describe(),
                            bytes: t.received,
                            sha256,
                        })
                    }
                    Err(e) => Err(internal_error(format!("storing in R2 failed: {e}"))),
                };
                self.finish(t, outcome).await;
            }
        }
        Ok(())
    }

    /// Ends a transfer with an error: both nodes drop what they have.
    pub(super) fn abort_transfer(&self, id: u32, reason: &str) {
        let Some(t) = self.nodes.transfers.borrow_mut().remove(&id) else {
            return;
        };
        for end in [&t.source, &t.destination] {
            if let Endpoint::Node { node_id, .. } = end {
                let evt = TransferCancelEvent {
                    transfer_id: id,
                    reason: reason.to_string(),
                };
                let _ = self.send_event(node_id, event::TRANSFER_CANCEL, &evt);
            }
        }
        let err = Err(ErrorShape::new(
            codes::INTERNAL,
            format!("transfer failed: {reason}"),
        ));
        self.state.wait_until(self.finish(t, err));
    }

    /// Fails every transfer a vanished node took part in.
    pub(super) fn node_transfers_gone(&self, node_id: &str) {
        let ids: Vec<u32> = self
            .nodes
            .transfers
            .borrow()
            .iter()
            .filter(|(_, t)| {
                [&t.source, &t.destination]
                    .iter()
                    .any(|e| matches!(e, Endpoint::Node { node_id: n, .. } if n == node_id))
            })
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.abort_transfer(id, &format!("node {node_id} disconnected"));
        }
    }

    /// Hands the call's outcome to its Session (a future that owns what it
    /// needs, so a synchronous caller can leave it to `wait_until`).
    fn finish(
        &self,
        t: Transfer,
        outcome: Res<Value>,
    ) -> impl std::future::Future<Output = ()> + 'static {
        let env = self.env.clone();
        async move { deliver(&env, &t.session_key, &t.call_id, outcome).await }
    }
}

/// Hands the call's outcome to its Session.
async fn deliver(env: &Env, session_key: &str, call_id: &str, outcome: Res<Value>) {
    let p = ToolResultParams::answer(call_id, outcome.map_err(|e| e.message));
    let r = SessionStub::for_key(env, session_key).call(&p).await;
    if let Err(e) = r {
        console_error!(
            "gateway: delivering a transfer result failed: {}",
            e.message
        );
    }
}
