//! Session archives in R2: gzip-compressed
//! JSONL, one message per line, written on reset (`{sessionId}.jsonl.gz`)
//! and compaction (`{sessionId}-part{ms}.jsonl.gz`).
//!
//! [`ArchiveWriter`] streams: it compresses one line at a time and hands
//! out compressed chunks of a fixed size for the shell to push into an R2
//! multipart upload (or a stream), so neither the JSONL text nor the whole
//! compressed file is ever held in memory at once. [`read_page`] streams
//! the other way for transcript retrieval.
//!
//! flate2 costs the Worker bundle ~35–40 KB gzipped once referenced. A
//! shell may instead pipe [`jsonl_line`]s through the runtime's
//! `CompressionStream("gzip")` and read with `DecompressionStream` +
//! [`read_jsonl_page`]: same archive format, no flate2 code linked.

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use gsv_protocol::{Message, TokenCounts};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};

/// R2's minimum multipart part size (all parts but the last).
pub const R2_MIN_PART_BYTES: usize = 5 * 1024 * 1024;

/// `agents/{agentId}/sessions/{sessionId}.jsonl.gz`: a reset archive.
pub fn archive_key(agent_id: &str, session_id: &str) -> String {
    format!("agents/{agent_id}/sessions/{session_id}.jsonl.gz")
}

/// `agents/{agentId}/sessions/{sessionId}-part{ms}.jsonl.gz`: the messages a
/// compaction removed.
pub fn part_archive_key(agent_id: &str, session_id: &str, part_ms: i64) -> String {
    format!("agents/{agent_id}/sessions/{session_id}-part{part_ms}.jsonl.gz")
}

/// What identifies an archived session in its R2 custom metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveInfo<'a> {
    pub session_key: &'a str,
    pub session_id: &'a str,
    pub agent_id: &'a str,
    pub message_count: u64,
    pub archived_at_ms: i64,
}

/// Custom metadata of a reset archive: `sessionKey, sessionId, agentId,
/// messageCount, archivedAt, inputTokens, outputTokens, totalTokens`.
pub fn archive_metadata(info: &ArchiveInfo, tokens: &TokenCounts) -> BTreeMap<String, String> {
    let mut m = common_metadata(info);
    m.insert("inputTokens".into(), tokens.input.to_string());
    m.insert("outputTokens".into(), tokens.output.to_string());
    m.insert("totalTokens".into(), tokens.total.to_string());
    m
}

/// Custom metadata of a part archive: `sessionKey, sessionId, agentId,
/// partNumber` (the `-part{ms}` suffix)`, messageCount, archivedAt`.
pub fn part_archive_metadata(info: &ArchiveInfo, part_ms: i64) -> BTreeMap<String, String> {
    let mut m = common_metadata(info);
    m.insert("partNumber".into(), part_ms.to_string());
    m
}

fn common_metadata(info: &ArchiveInfo) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("sessionKey".to_string(), info.session_key.to_string()),
        ("sessionId".to_string(), info.session_id.to_string()),
        ("agentId".to_string(), info.agent_id.to_string()),
        ("messageCount".to_string(), info.message_count.to_string()),
        ("archivedAt".to_string(), info.archived_at_ms.to_string()),
    ])
}

/// Why an archive could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveError(pub String);

impl std::fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<std::io::Error> for ArchiveError {
    fn from(e: std::io::Error) -> Self {
        Self(format!("archive I/O: {e}"))
    }
}

/// Streams messages into a gzip JSONL archive, handing out compressed
/// chunks of exactly `chunk_bytes` (the last one may be shorter).
pub struct ArchiveWriter {
    encoder: GzEncoder<Vec<u8>>,
    chunk_bytes: usize,
    message_count: u64,
    line: Vec<u8>,
}

impl ArchiveWriter {
    /// `chunk_bytes` ≥ [`R2_MIN_PART_BYTES`] for an R2 multipart upload; any
    /// size for a stream. Compression level 6.
    pub fn new(chunk_bytes: usize) -> Self {
        Self::with_level(chunk_bytes, 6)
    }

    /// Compression level 0 (none) to 9 (smallest, slowest).
    pub fn with_level(chunk_bytes: usize, level: u32) -> Self {
        Self {
            encoder: GzEncoder::new(Vec::new(), Compression::new(level.min(9))),
            chunk_bytes: chunk_bytes.max(1),
            message_count: 0,
            line: Vec::new(),
        }
    }

    /// Appends one message as a JSON line; returns a full chunk when one is
    /// ready. One huge message can fill several: drain with [`Self::take_chunk`].
    pub fn push_message(&mut self, message: &Message) -> Result<Option<Vec<u8>>, ArchiveError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, message)
            .map_err(|e| ArchiveError(format!("serializing message: {e}")))?;
        self.write_line()
    }

    /// Appends a message already serialized as JSON (the `data` column of
    /// the messages table), re-serialized compactly if it spans lines.
    pub fn push_json(&mut self, json: &str) -> Result<Option<Vec<u8>>, ArchiveError> {
        self.line.clear();
        if json.contains('\n') || json.contains('\r') {
            let v: serde_json::Value = serde_json::from_str(json)
                .map_err(|e| ArchiveError(format!("message is not JSON: {e}")))?;
            serde_json::to_writer(&mut self.line, &v)
                .map_err(|e| ArchiveError(format!("serializing message: {e}")))?;
        } else {
            self.line.extend_from_slice(json.trim().as_bytes());
        }
        self.write_line()
    }

    fn write_line(&mut self) -> Result<Option<Vec<u8>>, ArchiveError> {
        self.line.push(b'\n');
        self.encoder.write_all(&self.line)?;
        self.message_count += 1;
        Ok(self.take_chunk())
    }

    /// The next full chunk, if the compressor has produced one.
    pub fn take_chunk(&mut self) -> Option<Vec<u8>> {
        let buf = self.encoder.get_mut();
        if buf.len() < self.chunk_bytes {
            return None;
        }
        let rest = buf.split_off(self.chunk_bytes);
        Some(std::mem::replace(buf, rest))
    }

    /// Messages written so far (the `messageCount` metadata).
    pub fn message_count(&self) -> u64 {
        self.message_count
    }

    /// Ends the gzip stream: the remaining chunks, all full but the last
    /// (never empty unless nothing at all remains).
    pub fn finish_chunks(self) -> Result<Vec<Vec<u8>>, ArchiveError> {
        let chunk_bytes = self.chunk_bytes;
        let mut rest = self.encoder.finish()?;
        let mut chunks = Vec::new();
        while rest.len() > chunk_bytes {
            let tail = rest.split_off(chunk_bytes);
            chunks.push(std::mem::replace(&mut rest, tail));
        }
        if !rest.is_empty() {
            chunks.push(rest);
        }
        Ok(chunks)
    }

    /// Ends the gzip stream: all bytes not handed out yet, in one piece.
    pub fn finish(self) -> Result<Vec<u8>, ArchiveError> {
        Ok(self.finish_chunks()?.concat())
    }
}

/// One page of an archive's lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// The offset to ask for next, `None` at the end of the archive.
    pub next_offset: Option<usize>,
}

/// Lines `offset..offset + limit` of a gzip JSONL archive, each parsed as
/// `T` (`Message`, or `serde_json::Value` to pass lines through untouched).
/// Decompresses only as far as needed; skipped lines are not parsed.
pub fn read_page<T: DeserializeOwned, R: Read>(
    gz: R,
    offset: usize,
    limit: usize,
) -> Result<Page<T>, ArchiveError> {
    read_jsonl_page(BufReader::new(MultiGzDecoder::new(gz)), offset, limit)
}

/// [`read_page`] over JSONL that is already decompressed (e.g. by the
/// Worker's `DecompressionStream`); blank lines are ignored.
pub fn read_jsonl_page<T: DeserializeOwned, R: BufRead>(
    mut reader: R,
    offset: usize,
    limit: usize,
) -> Result<Page<T>, ArchiveError> {
    let mut line = String::new();
    let mut index = 0usize;
    let mut items = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(Page {
                items,
                next_offset: None,
            });
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if index >= offset {
            if items.len() == limit {
                return Ok(Page {
                    items,
                    next_offset: Some(index),
                });
            }
            let item = serde_json::from_str(text)
                .map_err(|e| ArchiveError(format!("archive line {}: {e}", index + 1)))?;
            items.push(item);
        }
        index += 1;
    }
}

/// One archive line (JSON + `\n`), for a shell that compresses with the
/// Worker's own `CompressionStream("gzip")` instead of [`ArchiveWriter`].
pub fn jsonl_line(message: &Message) -> Result<String, ArchiveError> {
    let mut line = serde_json::to_string(message)
        .map_err(|e| ArchiveError(format!("serializing message: {e}")))?;
    line.push('\n');
    Ok(line)
}

#[cfg(test)]
mod tests;
