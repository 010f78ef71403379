//! Session archives in R2 (seed `r2-storage-layout.txt`): gzip-compressed
//! JSONL, one message per line, written on reset (`{sessionId}.jsonl.gz`)
//! and compaction (`{sessionId}-part{ms}.jsonl.gz`).
//!
//! [`ArchiveWriter`] streams: it compresses one line at a time and hands
//! out compressed chunks of a fixed size for the shell to push into an R2
//! multipart upload (or a stream), so neither the JSONL text nor the whole
//! compressed file is ever held in memory at once. [`read_page`] streams
//! the other way for transcript retrieval.

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
    let mut reader = BufReader::new(MultiGzDecoder::new(gz));
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

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{
        AssistantBlock, AssistantMessage, ContentBlock, ToolResultMessage, UserContent, UserMessage,
    };
    use serde_json::json;

    fn message(i: usize) -> Message {
        let t = 1_708_300_000_000 + i as i64;
        match i % 3 {
            0 => Message::User(UserMessage {
                content: UserContent::Text(format!("question {i} — ünïcödé ✓")),
                timestamp: t,
            }),
            1 => Message::Assistant(AssistantMessage {
                content: vec![
                    AssistantBlock::Text {
                        text: format!("answer {i}\nwith a newline"),
                    },
                    AssistantBlock::ToolCall {
                        id: format!("c{i}"),
                        name: "Bash".into(),
                        arguments: json!({"command": "ls"}),
                    },
                ],
                api: None,
                provider: None,
                model: None,
                usage: None,
                stop_reason: None,
                error_message: None,
                timestamp: t,
            }),
            _ => Message::ToolResult(ToolResultMessage {
                tool_call_id: format!("c{}", i - 1),
                tool_name: "Bash".into(),
                content: vec![ContentBlock::Text {
                    text: "x".repeat(i % 500),
                }],
                is_error: false,
                timestamp: t,
            }),
        }
    }

    #[test]
    fn keys() {
        assert_eq!(
            archive_key("main", "s-1"),
            "agents/main/sessions/s-1.jsonl.gz"
        );
        assert_eq!(
            part_archive_key("main", "s-1", 1708300000000),
            "agents/main/sessions/s-1-part1708300000000.jsonl.gz"
        );
    }

    #[test]
    fn round_trip_of_2000_messages_in_chunks() {
        let messages: Vec<Message> = (0..2000).map(message).collect();
        let mut w = ArchiveWriter::new(4096);
        let mut chunks = Vec::new();
        for m in &messages {
            chunks.extend(w.push_message(m).unwrap());
            chunks.extend(std::iter::from_fn(|| w.take_chunk()));
        }
        assert_eq!(w.message_count(), 2000);
        chunks.extend(w.finish_chunks().unwrap());
        assert!(chunks.len() > 2);
        let (last, full) = chunks.split_last().unwrap();
        assert!(full.iter().all(|c| c.len() == 4096));
        assert!(!last.is_empty() && last.len() <= 4096);
        let gz = chunks.concat();
        let all: Page<Message> = read_page(&gz[..], 0, usize::MAX).unwrap();
        assert_eq!(
            all,
            Page {
                items: messages.clone(),
                next_offset: None
            }
        );
        let page: Page<Message> = read_page(&gz[..], 1990, 4).unwrap();
        assert_eq!(
            page,
            Page {
                items: messages[1990..1994].to_vec(),
                next_offset: Some(1994)
            }
        );
        let tail: Page<Message> = read_page(&gz[..], 1998, 5).unwrap();
        assert_eq!(
            tail,
            Page {
                items: messages[1998..].to_vec(),
                next_offset: None
            }
        );
        let past: Page<Message> = read_page(&gz[..], 5000, 5).unwrap();
        assert_eq!(
            past,
            Page {
                items: vec![],
                next_offset: None
            }
        );
    }

    #[test]
    fn raw_json_lines_pass_through() {
        let mut w = ArchiveWriter::new(R2_MIN_PART_BYTES);
        assert_eq!(
            w.push_json(r#"{"role":"user","content":"Hello","timestamp":1}"#)
                .unwrap(),
            None
        );
        assert_eq!(
            w.push_json("{\"role\":\"user\",\n \"content\":\"Hi\",\"timestamp\":2}")
                .unwrap(),
            None
        );
        assert_eq!(
            w.push_json("not json\n").unwrap_err(),
            ArchiveError("message is not JSON: expected ident at line 1 column 2".into())
        );
        let gz = w.finish().unwrap();
        let page: Page<serde_json::Value> = read_page(&gz[..], 0, 10).unwrap();
        assert_eq!(
            page.items,
            vec![
                json!({"role":"user","content":"Hello","timestamp":1}),
                json!({"role":"user","content":"Hi","timestamp":2})
            ]
        );
    }

    #[test]
    fn corrupt_lines_are_reported() {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(b"{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}\n{oops}\n")
            .unwrap();
        let gz = enc.finish().unwrap();
        let err = read_page::<Message, _>(&gz[..], 0, 10).unwrap_err();
        assert_eq!(
            err,
            ArchiveError("archive line 2: key must be a string at line 1 column 2".into())
        );
        assert!(read_page::<Message, _>(&b"not gzip"[..], 0, 1).is_err());
    }

    #[test]
    fn metadata_maps() {
        let info = ArchiveInfo {
            session_key: "agent:main:main",
            session_id: "8d6c",
            agent_id: "main",
            message_count: 42,
            archived_at_ms: 1708300000000,
        };
        let tokens = TokenCounts {
            input: 1000,
            output: 200,
            total: 1200,
        };
        let s = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            archive_metadata(&info, &tokens),
            s(&[
                ("sessionKey", "agent:main:main"),
                ("sessionId", "8d6c"),
                ("agentId", "main"),
                ("messageCount", "42"),
                ("archivedAt", "1708300000000"),
                ("inputTokens", "1000"),
                ("outputTokens", "200"),
                ("totalTokens", "1200"),
            ])
        );
        assert_eq!(
            part_archive_metadata(&info, 1708300005000),
            s(&[
                ("sessionKey", "agent:main:main"),
                ("sessionId", "8d6c"),
                ("agentId", "main"),
                ("partNumber", "1708300005000"),
                ("messageCount", "42"),
                ("archivedAt", "1708300000000"),
            ])
        );
    }
}
