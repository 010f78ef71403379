//! Telegram's `parse_mode: "HTML"`, as the Bot API reads it: the supported
//! tags only (`b strong i em u ins s strike del tg-spoiler span
//! class="tg-spoiler" a href code pre pre>code class="language-…" blockquote
//! blockquote expandable tg-emoji`), the four named entities (`&lt; &gt;
//! &amp; &quot;`, the `;` optional) and numeric ones; an `&` that starts no
//! entity it knows is kept as it is. Anything else is refused with the
//! server's own words (`Unsupported start tag "br" at byte offset 5`, …),
//! which the Bot API hands back as `Bad Request: can't parse entities: …`.
//! Offsets of the entities it finds are in UTF-16 code units, as Telegram
//! counts them.
//!
//! After parsing, Telegram trims spaces and line breaks at both ends of the
//! text (moving the entities with it) and counts what is left: see
//! [`finish`]. The length limits count characters, not UTF-16 units.

use serde_json::{json, Value};

/// One entity of a parsed text (a `MessageEntity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// `bold`, `italic`, `underline`, `strikethrough`, `spoiler`, `code`,
    /// `pre`, `text_link`, `custom_emoji`, `blockquote`,
    /// `expandable_blockquote`; for texts people write also `mention` and
    /// `bot_command` (see [`detect`]).
    pub kind: &'static str,
    /// In UTF-16 code units.
    pub offset: usize,
    pub length: usize,
    /// `text_link` only.
    pub url: Option<String>,
    /// `pre` only.
    pub language: Option<String>,
    /// `custom_emoji` only.
    pub custom_emoji_id: Option<String>,
}

impl Entity {
    fn new(kind: &'static str, offset: usize, length: usize) -> Self {
        Entity {
            kind,
            offset,
            length,
            url: None,
            language: None,
            custom_emoji_id: None,
        }
    }

    /// As the Bot API writes a `MessageEntity`.
    pub fn json(&self) -> Value {
        let mut v = json!({"offset": self.offset, "length": self.length, "type": self.kind});
        if let Some(u) = &self.url {
            v["url"] = json!(u);
        }
        if let Some(l) = &self.language {
            v["language"] = json!(l);
        }
        if let Some(id) = &self.custom_emoji_id {
            v["custom_emoji_id"] = json!(id);
        }
        v
    }
}

/// UTF-16 code units of `s` (what Telegram's entity offsets count).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// A tag that is open while the parser reads what it encloses.
struct Open {
    tag: String,
    argument: String,
    /// UTF-16 offset of its first character.
    offset: usize,
    /// Byte offset of its first character in the output.
    out_at: usize,
}

/// The byte at `i`, or 0 past the end (the parser reads a C string).
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// The server's `is_space`: the end of the text counts as one.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b)
}

/// `&…` at `pos`: the character and where the text goes on, or `None`
/// when it is no entity the server knows (the `&` is then kept).
fn decode_entity(b: &[u8], pos: usize) -> Option<(u32, usize)> {
    let mut end = pos + 1;
    let code: u64;
    if at(b, pos + 1) == b'#' {
        end += 1;
        let mut n: u64 = 0;
        if at(b, pos + 2) == b'x' {
            end += 1;
            while at(b, end).is_ascii_hexdigit() {
                n = (n * 16 + u64::from((at(b, end) as char).to_digit(16).unwrap_or(0)))
                    .min(u64::from(u32::MAX));
                end += 1;
            }
        } else {
            while at(b, end).is_ascii_digit() {
                n = (n * 10 + u64::from(at(b, end) - b'0')).min(u64::from(u32::MAX));
                end += 1;
            }
        }
        if n == 0 || n >= 0x10ffff || end - pos >= 10 {
            return None;
        }
        code = n;
    } else {
        while at(b, end).is_ascii_alphabetic() {
            end += 1;
        }
        code = match &b[pos + 1..end] {
            b"lt" => u64::from(b'<'),
            b"gt" => u64::from(b'>'),
            b"amp" => u64::from(b'&'),
            b"quot" => u64::from(b'"'),
            _ => return None,
        };
    }
    if at(b, end) == b';' {
        end += 1;
    }
    Some((code as u32, end))
}

const TAGS: &[&str] = &[
    "a",
    "b",
    "strong",
    "i",
    "em",
    "s",
    "strike",
    "del",
    "u",
    "ins",
    "tg-spoiler",
    "tg-emoji",
    "span",
    "pre",
    "code",
    "blockquote",
];

const INVALID_UNICODE: &str = "Text contains invalid Unicode characters after decoding HTML \
    entities, check for unmatched surrogate code units";

/// Parses `html` as Telegram does: the plain text and its entities, or
/// the server's reason (without the `can't parse entities: ` prefix).
pub fn parse(html: &str) -> Result<(String, Vec<Entity>), String> {
    let b = html.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut utf16 = 0usize;
    let mut open: Vec<Open> = Vec::new();
    let mut entities: Vec<Entity> = Vec::new();
    let mut i = 0usize;
    while i < b.len() {
        let c = b[i];
        if c == b'&' {
            if let Some((code, next)) = decode_entity(b, i) {
                let ch = char::from_u32(code).ok_or_else(|| INVALID_UNICODE.to_string())?;
                utf16 += ch.len_utf16();
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i = next;
                continue;
            }
        }
        if c != b'<' {
            // A UTF-8 lead byte starts a character: 4-byte ones are two
            // UTF-16 units.
            if c & 0xC0 != 0x80 {
                utf16 += if c >= 0xF0 { 2 } else { 1 };
            }
            out.push(c);
            i += 1;
            continue;
        }
        let begin = i;
        i += 1;
        if at(b, i) != b'/' {
            // A start tag.
            while !is_space(at(b, i)) && at(b, i) != b'>' {
                i += 1;
            }
            if at(b, i) == 0 {
                return Err(format!("Unclosed start tag at byte offset {begin}"));
            }
            let tag = String::from_utf8_lossy(&b[begin + 1..i]).to_lowercase();
            if !TAGS.contains(&tag.as_str()) {
                return Err(format!(
                    "Unsupported start tag \"{tag}\" at byte offset {begin}"
                ));
            }
            let mut argument = String::new();
            while at(b, i) != b'>' {
                while at(b, i) != 0 && is_space(at(b, i)) {
                    i += 1;
                }
                if at(b, i) == b'>' {
                    break;
                }
                let name_at = i;
                while !is_space(at(b, i)) && !matches!(at(b, i), b'=' | b'>' | b'/' | b'"' | b'\'')
                {
                    i += 1;
                }
                let name = String::from_utf8_lossy(&b[name_at..i]).into_owned();
                if name.is_empty() {
                    return Err(format!(
                        "Empty attribute name in the tag \"{tag}\" at byte offset {begin}"
                    ));
                }
                while at(b, i) != 0 && is_space(at(b, i)) {
                    i += 1;
                }
                if at(b, i) != b'=' {
                    if at(b, i) == 0 {
                        return Err(format!(
                            "Unclosed start tag \"{tag}\" at byte offset {begin}"
                        ));
                    }
                    if tag == "blockquote" && name == "expandable" {
                        argument = "1".into();
                    }
                    continue;
                }
                i += 1;
                while at(b, i) != 0 && is_space(at(b, i)) {
                    i += 1;
                }
                if at(b, i) == 0 {
                    return Err(format!(
                        "Unclosed start tag \"{tag}\" at byte offset {begin}"
                    ));
                }
                let value = if at(b, i) != b'\'' && at(b, i) != b'"' {
                    // A name token: letters, digits, periods, hyphens; not
                    // case sensitive.
                    let token_at = i;
                    while at(b, i).is_ascii_alphanumeric() || matches!(at(b, i), b'.' | b'-') {
                        i += 1;
                    }
                    let v = String::from_utf8_lossy(&b[token_at..i]).to_lowercase();
                    if !is_space(at(b, i)) && at(b, i) != b'>' {
                        return Err(format!(
                            "Unexpected end of name token at byte offset {token_at}"
                        ));
                    }
                    v
                } else {
                    let quote = at(b, i);
                    i += 1;
                    let mut v: Vec<u8> = Vec::new();
                    while at(b, i) != quote && at(b, i) != 0 {
                        if at(b, i) == b'&' {
                            if let Some((code, next)) = decode_entity(b, i) {
                                let ch = char::from_u32(code)
                                    .ok_or_else(|| INVALID_UNICODE.to_string())?;
                                let mut buf = [0u8; 4];
                                v.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                i = next;
                                continue;
                            }
                        }
                        v.push(at(b, i));
                        i += 1;
                    }
                    if at(b, i) == quote {
                        i += 1;
                    }
                    String::from_utf8_lossy(&v).into_owned()
                };
                if at(b, i) == 0 {
                    return Err(format!("Unclosed start tag at byte offset {begin}"));
                }
                match (tag.as_str(), name.as_str()) {
                    ("a", "href") | ("tg-emoji", "emoji-id") => argument = value,
                    ("code", "class") if value.starts_with("language-") => {
                        argument = value["language-".len()..].to_string()
                    }
                    ("span", "class") if value.starts_with("tg-") => {
                        argument = value["tg-".len()..].to_string()
                    }
                    ("blockquote", "expandable") => argument = "1".into(),
                    _ => {}
                }
            }
            if tag == "span" && argument != "spoiler" {
                return Err(format!(
                    "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
                ));
            }
            open.push(Open {
                tag,
                argument,
                offset: utf16,
                out_at: out.len(),
            });
            i += 1;
        } else {
            // An end tag.
            if open.is_empty() {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            }
            while !is_space(at(b, i)) && at(b, i) != b'>' {
                i += 1;
            }
            let end_tag = String::from_utf8_lossy(&b[begin + 2..i]).to_lowercase();
            while is_space(at(b, i)) && at(b, i) != 0 {
                i += 1;
            }
            if at(b, i) != b'>' {
                return Err(format!("Unclosed end tag at byte offset {begin}"));
            }
            let o = open.pop().unwrap_or_else(|| unreachable!());
            if !end_tag.is_empty() && end_tag != o.tag {
                return Err(format!(
                    "Unmatched end tag at byte offset {begin}, expected \"</{}>\", found \"</{end_tag}>\"",
                    o.tag
                ));
            }
            if utf16 > o.offset {
                close(&mut entities, o, utf16, &out)?;
            }
            i += 1;
        }
    }
    if let Some(o) = open.last() {
        return Err(format!(
            "Can't find end tag corresponding to start tag \"{}\"",
            o.tag
        ));
    }
    for e in &mut entities {
        if e.kind == "code" {
            e.language = None;
        }
    }
    sort(&mut entities);
    let text = String::from_utf8(out).map_err(|_| INVALID_UNICODE.to_string())?;
    Ok((text, entities))
}

/// The entity a closed tag makes.
fn close(entities: &mut Vec<Entity>, o: Open, end: usize, out: &[u8]) -> Result<(), String> {
    let len = end - o.offset;
    let mut e = |kind| entities.push(Entity::new(kind, o.offset, len));
    match o.tag.as_str() {
        "i" | "em" => e("italic"),
        "b" | "strong" => e("bold"),
        "s" | "strike" | "del" => e("strikethrough"),
        "u" | "ins" => e("underline"),
        "tg-spoiler" | "span" => e("spoiler"),
        "blockquote" if o.argument.is_empty() => e("blockquote"),
        "blockquote" => e("expandable_blockquote"),
        "tg-emoji" => {
            let id = o.argument.parse::<i64>().ok().filter(|id| *id != 0);
            let Some(id) = id else {
                return Err("Invalid custom emoji identifier specified".into());
            };
            let mut x = Entity::new("custom_emoji", o.offset, len);
            x.custom_emoji_id = Some(id.to_string());
            entities.push(x);
        }
        "a" => {
            let url = match o.argument.is_empty() {
                true => String::from_utf8_lossy(&out[o.out_at..]).into_owned(),
                false => o.argument,
            };
            // A link Telegram cannot check is dropped, not refused.
            if let Some(url) = checked_link(&url) {
                let mut x = Entity::new("text_link", o.offset, len);
                x.url = Some(url);
                entities.push(x);
            }
        }
        "pre" => match entities.last_mut() {
            Some(last)
                if last.kind == "code"
                    && last.offset == o.offset
                    && last.length == len
                    && last.language.is_some() =>
            {
                last.kind = "pre";
            }
            _ => entities.push(Entity::new("pre", o.offset, len)),
        },
        "code" => match entities.last_mut() {
            Some(last)
                if last.kind == "pre"
                    && last.offset == o.offset
                    && last.length == len
                    && !o.argument.is_empty() =>
            {
                last.language = Some(o.argument);
            }
            _ => {
                let mut x = Entity::new("code", o.offset, len);
                x.language = (!o.argument.is_empty()).then_some(o.argument);
                entities.push(x);
            }
        },
        _ => unreachable!("only supported tags are opened"),
    }
    Ok(())
}

/// A link as Telegram keeps it (`http://` added to a bare host), or none.
fn checked_link(url: &str) -> Option<String> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("tg://")
        || lower.starts_with("ton://")
    {
        return (url.len() > lower.find("://")? + 3).then(|| url.to_string());
    }
    if url.contains("://") || url.is_empty() || url.contains(char::is_whitespace) {
        return None;
    }
    let host = url.split(['/', '?', '#']).next().unwrap_or_default();
    (host.contains('.') && !host.starts_with('.') && !host.ends_with('.'))
        .then(|| format!("http://{url}"))
}

/// By offset, then the longer first (Telegram's order).
fn sort(entities: &mut [Entity]) {
    entities.sort_by(|a, b| a.offset.cmp(&b.offset).then(b.length.cmp(&a.length)));
}

/// What Telegram does after parsing: spaces and line breaks at both ends
/// are cut (entities move with the text and end where it ends; those left
/// empty go). `None` when nothing is left.
pub fn finish(text: &str, entities: Vec<Entity>) -> Option<(String, Vec<Entity>)> {
    let is_blank = |c: char| c == ' ' || c == '\n';
    let trimmed_start = text.trim_start_matches(is_blank);
    let cut_front = utf16_len(&text[..text.len() - trimmed_start.len()]);
    let trimmed = trimmed_start.trim_end_matches(is_blank);
    if trimmed.is_empty() {
        return None;
    }
    let total = utf16_len(trimmed);
    let mut kept = Vec::new();
    for mut e in entities {
        let start = e.offset.max(cut_front) - cut_front;
        let end = (e.offset + e.length).saturating_sub(cut_front).min(total);
        if end > start {
            e.offset = start;
            e.length = end - start;
            kept.push(e);
        }
    }
    sort(&mut kept);
    Some((trimmed.to_string(), kept))
}

/// The entities Telegram finds by itself in a text people write: bot
/// commands (`/status`, `/status@gsv_test_bot`), mentions (`@name`) and
/// links (`https://…`), in UTF-16 offsets.
pub fn detect(text: &str) -> Vec<Entity> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut utf16_at = Vec::with_capacity(chars.len() + 1);
    let mut n = 0;
    for c in &chars {
        utf16_at.push(n);
        n += c.len_utf16();
    }
    utf16_at.push(n);
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || chars[i - 1].is_whitespace();
        let c = chars[i];
        if boundary && c == '/' {
            let mut j = i + 1;
            while j < chars.len() && word(chars[j]) && j - i <= 32 {
                j += 1;
            }
            if j > i + 1 {
                if j < chars.len() && chars[j] == '@' {
                    let mut k = j + 1;
                    while k < chars.len() && word(chars[k]) {
                        k += 1;
                    }
                    if k - j > 3 {
                        j = k;
                    }
                }
                out.push(Entity::new(
                    "bot_command",
                    utf16_at[i],
                    utf16_at[j] - utf16_at[i],
                ));
                i = j;
                continue;
            }
        }
        if boundary && c == '@' {
            let mut j = i + 1;
            while j < chars.len() && word(chars[j]) {
                j += 1;
            }
            if j - i > 4 {
                out.push(Entity::new(
                    "mention",
                    utf16_at[i],
                    utf16_at[j] - utf16_at[i],
                ));
                i = j;
                continue;
            }
        }
        if boundary {
            let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
            if rest.starts_with("http://") || rest.starts_with("https://") {
                let mut j = i;
                while j < chars.len() && !chars[j].is_whitespace() {
                    j += 1;
                }
                out.push(Entity::new("url", utf16_at[i], utf16_at[j] - utf16_at[i]));
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The text an entity covers.
pub fn covered(text: &str, e: &Entity) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    let end = (e.offset + e.length).min(units.len());
    String::from_utf16_lossy(&units[e.offset.min(end)..end])
}
