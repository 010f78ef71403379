//! An incremental Server-Sent Events parser (WHATWG HTML §9.2.6 "Parsing an
//! event stream") fed with arbitrary byte chunks.
//!
//! Bytes are buffered and only complete lines are decoded, so a chunk may end
//! anywhere, even inside a multi-byte UTF-8 character (CR and LF never occur
//! inside one). Invalid UTF-8 is replaced with U+FFFD, as the spec says.

use gsv_protocol::AssistantMessage;

use super::{LlmError, StreamDecoder};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type `message`.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
    /// The last event ID seen so far in the stream (the spec keeps it across
    /// events), `None` when no `id:` field came yet.
    pub id: Option<String>,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes not yet consumed as complete lines.
    buf: Vec<u8>,
    /// Where to resume the search for a line end in `buf`.
    scan_from: usize,
    /// The previous chunk ended with CR: an LF at the start of the next chunk
    /// belongs to that CRLF, not to a new (blank) line.
    skip_lf: bool,
    /// The optional UTF-8 BOM at the very start has been dealt with.
    bom_checked: bool,
    event_type: String,
    data: String,
    /// Some `data:` field was seen for the pending event.
    has_data: bool,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the response body; returns the events it
    /// completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut bytes = bytes;
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        self.buf.extend_from_slice(bytes);
        if !self.bom_checked {
            if self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return Vec::new(); // maybe a BOM split across chunks
            }
            if self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
            }
            self.bom_checked = true;
        }
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = self.scan_from;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b != b'\n' && b != b'\r' {
                i += 1;
                continue;
            }
            let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
            let mut next = i + 1;
            if b == b'\r' {
                if next < self.buf.len() {
                    if self.buf[next] == b'\n' {
                        next += 1;
                    }
                } else {
                    self.skip_lf = true; // the LF may come with the next chunk
                }
            }
            if let Some(event) = self.process_line(&line) {
                events.push(event);
            }
            start = next;
            i = next;
        }
        self.buf.drain(..start);
        self.scan_from = self.buf.len();
        events
    }

    /// The body ended. A pending event whose lines were all terminated is
    /// dispatched (servers sometimes omit the final blank line). If the body
    /// ended mid-line the stream was cut, and the whole pending event is
    /// discarded, as the spec discards incomplete events.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let truncated = !self.buf.is_empty() && self.bom_checked;
        self.buf.clear();
        self.scan_from = 0;
        self.skip_lf = false;
        if truncated {
            self.event_type.clear();
            self.data.clear();
            self.has_data = false;
            return Vec::new();
        }
        self.dispatch().into_iter().collect()
    }

    /// The last `retry:` value, in milliseconds (the server's reconnection hint).
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    fn process_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // a comment, e.g. OpenRouter's ": OPENROUTER PROCESSING"
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event_type = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|c| c.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {} // unknown fields are ignored
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event_type = std::mem::take(&mut self.event_type);
        if !self.has_data {
            return None; // the spec drops events without data
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the LF added after the last data line
        Some(SseEvent {
            event: (!event_type.is_empty()).then_some(event_type),
            data,
            id: self.last_id.clone(),
        })
    }
}

/// Reads a streamed answer: bytes in, visible text out, the whole message at
/// the end. What the shell drives with each body chunk.
pub struct StreamReader {
    parser: SseParser,
    decoder: Box<dyn StreamDecoder>,
}

impl StreamReader {
    pub fn new(decoder: Box<dyn StreamDecoder>) -> Self {
        Self {
            parser: SseParser::new(),
            decoder,
        }
    }

    /// Feeds one body chunk; returns the text that became visible (often
    /// empty). After an error, stop reading: the call failed.
    pub fn push(&mut self, bytes: &[u8]) -> Result<String, LlmError> {
        let mut visible = String::new();
        for event in self.parser.push(bytes) {
            visible.push_str(&self.decoder.on_event(&event)?);
        }
        Ok(visible)
    }

    /// The body ended: the last visible text (usually empty) and the message.
    pub fn finish(mut self, timestamp: i64) -> Result<(String, AssistantMessage), LlmError> {
        let mut visible = String::new();
        for event in self.parser.finish() {
            visible.push_str(&self.decoder.on_event(&event)?);
        }
        Ok((visible, self.decoder.finish(timestamp)?))
    }
}

/// Test support: decodes a whole raw stream fed in `chunk_size`-byte pieces;
/// returns the visible deltas and the outcome.
#[cfg(test)]
pub(crate) fn decode_raw_stream(
    decoder: Box<dyn StreamDecoder>,
    raw: &str,
    chunk_size: usize,
) -> (Vec<String>, Result<AssistantMessage, LlmError>) {
    let mut reader = StreamReader::new(decoder);
    let mut deltas = Vec::new();
    for chunk in raw.as_bytes().chunks(chunk_size) {
        match reader.push(chunk) {
            Ok(text) if text.is_empty() => {}
            Ok(text) => deltas.push(text),
            Err(e) => return (deltas, Err(e)),
        }
    }
    match reader.finish(1_700_000_000_000) {
        Ok((tail, message)) => {
            if !tail.is_empty() {
                deltas.push(tail);
            }
            (deltas, Ok(message))
        }
        Err(e) => (deltas, Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    fn parse_whole(input: &[u8]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = p.push(input);
        out.extend(p.finish());
        out
    }

    #[test]
    fn fields_comments_and_multiline_data() {
        let input = b": keep-alive comment\n\
            event: message_start\n\
            data: {\"a\":1}\n\
            \n\
            data: line one\n\
            data:line two\n\
            data\n\
            id: 42\n\
            unknown: x\n\
            \n\
            event: ping\n\
            \n\
            data:  two leading spaces keep one\n\
            \n";
        assert_eq!(
            parse_whole(input),
            vec![
                ev(Some("message_start"), "{\"a\":1}", None),
                ev(None, "line one\nline two\n", Some("42")),
                // `event: ping` without data is dropped; the id persists.
                ev(None, " two leading spaces keep one", Some("42")),
            ]
        );
    }

    #[test]
    fn crlf_cr_and_lf_line_endings() {
        let input = b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n";
        assert_eq!(
            parse_whole(input),
            vec![
                ev(Some("a"), "1", None),
                ev(Some("b"), "2", None),
                ev(None, "3", None)
            ]
        );
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut p = SseParser::new();
        assert_eq!(p.push(b"data: x\r"), vec![]);
        // This LF completes the CRLF above; only the next CRLF is the blank line.
        assert_eq!(p.push(b"\n"), vec![]);
        assert_eq!(p.push(b"\r\n"), vec![ev(None, "x", None)]);
    }

    #[test]
    fn bom_is_stripped_even_when_split() {
        let mut p = SseParser::new();
        assert_eq!(p.push(b"\xEF\xBB"), vec![]);
        assert_eq!(p.push(b"\xBFdata: hi\n\n"), vec![ev(None, "hi", None)]);
    }

    #[test]
    fn finish_dispatches_terminated_lines_but_drops_a_truncated_one() {
        let mut p = SseParser::new();
        assert_eq!(p.push(b"data: [DONE]\n"), vec![]);
        assert_eq!(p.finish(), vec![ev(None, "[DONE]", None)]);

        let mut p = SseParser::new();
        assert_eq!(p.push(b"data: first line\ndata: {\"trunc"), vec![]);
        assert_eq!(p.finish(), vec![]);
    }

    #[test]
    fn retry_field_is_recorded() {
        let mut p = SseParser::new();
        p.push(b"retry: 1500\nretry: soon\n\n");
        assert_eq!(p.retry_ms(), Some(1500));
    }

    #[test]
    fn invalid_utf8_becomes_replacement_char() {
        assert_eq!(
            parse_whole(b"data: a\xFFb\n\n"),
            vec![ev(None, "a\u{FFFD}b", None)]
        );
    }

    #[test]
    fn split_at_every_byte_offset_including_multibyte_chars() {
        let stream = "event: content_block_delta\r\n\
            data: {\"text\":\"héllo 👋\"}\r\n\r\n\
            : ping\n\
            id: 7\n\
            data: ünï\n\
            data: 😀 end\n\n\
            data: [DONE]\r\r";
        let bytes = stream.as_bytes();
        let expected = vec![
            ev(Some("content_block_delta"), "{\"text\":\"héllo 👋\"}", None),
            ev(None, "ünï\n😀 end", Some("7")),
            ev(None, "[DONE]", Some("7")),
        ];
        assert_eq!(parse_whole(bytes), expected);
        for cut in 0..=bytes.len() {
            let mut p = SseParser::new();
            let mut got = p.push(&bytes[..cut]);
            got.extend(p.push(&bytes[cut..]));
            got.extend(p.finish());
            assert_eq!(got, expected, "split at byte {cut}");
        }
        // And one byte at a time.
        let mut p = SseParser::new();
        let mut got: Vec<SseEvent> = bytes.iter().flat_map(|b| p.push(&[*b])).collect();
        got.extend(p.finish());
        assert_eq!(got, expected);
    }
}
