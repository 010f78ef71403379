//! Read: numbered lines of a text file, or an image as a content block.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read as _};
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use futures_util::future::BoxFuture;
use gsv_protocol::capability;
use serde_json::{json, Value};

use super::text::cap_line;
use super::{blocking, show, Args, Ctx, Tool, ToolResult};

const DEFAULT_LIMIT: u64 = 2000;
/// Bytes of numbered output at most.
const MAX_OUTPUT: usize = 256 * 1024;
/// Characters of one line at most.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes of one line kept while reading (enough for MAX_LINE_CHARS).
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS + 4;
const MAX_IMAGE: u64 = 5 * 1024 * 1024;
/// Bytes looked at to tell text, binary and images apart.
const SNIFF: usize = 8192;

pub struct Read;

impl Tool for Read {
    fn name(&self) -> &'static str {
        "Read"
    }

    fn description(&self) -> &'static str {
        "Read a file in the workspace. Text comes back as numbered lines (`     1\\tline`), \
         by default the first 2000 lines and at most 256 KiB; use offset (0-based line) and \
         limit for more. Lines over 2000 characters are cut. PNG, JPEG, GIF and WebP images \
         (up to 5 MiB) come back as images; other binary files are refused."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it."},
                "offset": {"type": "integer", "minimum": 0, "description": "First line to return, 0-based (default 0)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines (default 2000)."}
            },
            "required": ["path"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::FILESYSTEM_READ]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(async move {
            let input = args.non_empty_str("path")?;
            let path = ctx.workspace.resolve("path", &input)?;
            let offset = args.opt_u64("offset")?.unwrap_or(0);
            let limit = args
                .opt_u64("limit")?
                .filter(|l| *l > 0)
                .unwrap_or(DEFAULT_LIMIT);
            blocking(move || read(&path, offset, limit)).await
        })
    }
}

fn read(path: &Path, offset: u64, limit: u64) -> ToolResult {
    let shown = show(path);
    let fail = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => format!("file {shown} does not exist"),
        _ => format!("cannot read {shown}: {e}"),
    };
    let meta = std::fs::metadata(path).map_err(fail)?;
    if meta.is_dir() {
        return Err(format!(
            "{shown} is a directory; use Glob to list its files"
        ));
    }
    let mut file = File::open(path).map_err(fail)?;
    let mut head = Vec::with_capacity(SNIFF);
    (&mut file)
        .take(SNIFF as u64)
        .read_to_end(&mut head)
        .map_err(fail)?;
    if let Some(mime) = image_mime(&head) {
        if meta.len() > MAX_IMAGE {
            return Err(format!(
                "{shown} is an image ({mime}, {} bytes); images over 5 MiB are not returned",
                meta.len()
            ));
        }
        let mut data = head;
        file.read_to_end(&mut data).map_err(fail)?;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
        return Ok(json!({
            "path": shown,
            "mimeType": mime,
            "size": data.len(),
            "content": [
                {"type": "image", "data": encoded, "mimeType": mime},
                {"type": "text", "text": format!("Image {shown} ({} bytes)", data.len())}
            ]
        }));
    }
    if head.contains(&0) {
        return Err(format!(
            "{shown} is a binary file ({} bytes); Read returns text files and PNG, JPEG, GIF \
             or WebP images only",
            meta.len()
        ));
    }
    let reader = BufReader::with_capacity(64 * 1024, io::Cursor::new(head).chain(file));
    numbered(reader, offset, limit, &shown).map_err(fail)
}

fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn numbered(mut reader: impl BufRead, offset: u64, limit: u64, shown: &str) -> io::Result<Value> {
    let mut content = String::new();
    let mut seen: u64 = 0; // lines consumed
    let mut returned: u64 = 0;
    let mut long_lines = 0;
    let mut size_capped = false;
    let mut line = Vec::new();
    while seen < offset {
        if !consume_line(&mut reader, None)? {
            break;
        }
        seen += 1;
    }
    while returned < limit {
        line.clear();
        if !consume_line(&mut reader, Some(&mut line))? {
            break;
        }
        seen += 1;
        if line.ends_with(b"\n") {
            line.pop();
        }
        if line.ends_with(b"\r") {
            line.pop();
        }
        let (text, cut) = cap_line(&String::from_utf8_lossy(&line), MAX_LINE_CHARS);
        long_lines += usize::from(cut);
        let entry = format!("{seen:6}\t{text}\n");
        if content.len() + entry.len() > MAX_OUTPUT && returned > 0 {
            size_capped = true;
            break;
        }
        content.push_str(&entry);
        returned += 1;
    }
    let mut total = seen;
    while consume_line(&mut reader, None)? {
        total += 1;
    }
    content.pop(); // the last newline
    let start = offset.min(total);
    let next = start + returned;
    let truncated = next < total;
    let mut note = if returned == 0 && total > 0 && offset >= total {
        format!("offset {offset} is past the end of the file ({total} lines).")
    } else {
        format!("Showing lines {}-{next} of {total}.", start + 1)
    };
    if size_capped {
        note.push_str(" Output was capped at 256 KiB.");
    }
    if truncated {
        note.push_str(&format!(" Use offset={next} to read more."));
    }
    if long_lines > 0 {
        note.push_str(&format!(
            " {long_lines} line(s) over {MAX_LINE_CHARS} characters were cut."
        ));
    }
    let mut out = json!({
        "path": shown,
        "content": content,
        "lines": returned,
        "totalLines": total,
        "offset": start,
        "truncated": truncated,
    });
    if truncated {
        out["nextOffset"] = json!(next);
    }
    if truncated || size_capped || long_lines > 0 || returned == 0 {
        out["note"] = json!(note);
    }
    Ok(out)
}

/// Consumes one line (through its `\n`), keeping at most MAX_LINE_BYTES of
/// it in `keep`; false at end of input.
fn consume_line(reader: &mut impl BufRead, mut keep: Option<&mut Vec<u8>>) -> io::Result<bool> {
    let mut any = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let (used, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if let Some(keep) = keep.as_deref_mut() {
            let room = MAX_LINE_BYTES.saturating_sub(keep.len());
            keep.extend_from_slice(&buf[..used.min(room)]);
            if done && used > room {
                keep.push(b'\n');
            }
        }
        reader.consume(used);
        if done {
            return Ok(true);
        }
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
