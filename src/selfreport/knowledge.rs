//! `what_do_i_know`: MEMORY.md as sections of bullets, filtered and capped.

use crate::prompt::strip_html_comments;
use serde::Serialize;

/// Cap on the serialized `what_do_i_know` result, in bytes.
pub const MAX_KNOWLEDGE_BYTES: usize = 6144;
/// Cap on bullets shown per section.
pub const MAX_BULLETS_PER_SECTION: usize = 10;

/// One MEMORY.md section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemorySection {
    /// The heading text, without `#`s (empty before the first heading).
    pub heading: String,
    /// The list items, markers removed.
    pub bullets: Vec<String>,
}

/// The `what_do_i_know` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Knowledge {
    /// Sections in file order.
    pub sections: Vec<MemorySection>,
    /// Set when bullets or sections were left out to respect the caps.
    pub truncated: bool,
}

/// Splits MEMORY.md at its headings. Bullets are list items (`-`, `*`,
/// `+`, `1.`, `1)`), nested ones included, with indented continuation
/// lines joined; other text and HTML comments are ignored, and sections
/// without bullets are left out. Bullets before any heading go under an
/// empty heading.
pub fn memory_sections(md: &str) -> Vec<MemorySection> {
    let mut sections: Vec<MemorySection> = Vec::new();
    let mut current = MemorySection {
        heading: String::new(),
        bullets: Vec::new(),
    };
    let mut in_bullet = false;
    for line in strip_html_comments(md).lines() {
        let t = line.trim();
        if let Some(heading) = heading(t) {
            let done = std::mem::replace(
                &mut current,
                MemorySection {
                    heading: heading.to_string(),
                    bullets: Vec::new(),
                },
            );
            sections.push(done);
            in_bullet = false;
        } else if let Some(item) = list_item(t) {
            current.bullets.push(item.to_string());
            in_bullet = true;
        } else if t.is_empty() {
            in_bullet = false;
        } else if let (true, Some(last)) = (
            in_bullet && line.starts_with([' ', '\t']),
            current.bullets.last_mut(),
        ) {
            last.push(' ');
            last.push_str(t);
        } else {
            in_bullet = false;
        }
    }
    sections.push(current);
    sections.retain(|s| !s.bullets.is_empty());
    sections
}

/// Number of bullets in MEMORY.md.
pub fn count_memories(md: &str) -> usize {
    memory_sections(md).iter().map(|s| s.bullets.len()).sum()
}

/// The `what_do_i_know` result for MEMORY.md (`None` = no file). With a
/// `filter`, a section whose heading contains it (ignoring ASCII case: the
/// Unicode case tables would cost the Worker ~10 KB) is kept
/// whole; otherwise only its bullets that contain it are kept. At most 10
/// bullets per section and 6 144 bytes of JSON; `truncated` says when
/// something was left out.
pub fn what_do_i_know(memory_md: Option<&str>, filter: Option<&str>) -> Knowledge {
    let filter = filter
        .map(|f| f.trim().to_ascii_lowercase())
        .filter(|f| !f.is_empty());
    let mut out = Knowledge {
        sections: Vec::new(),
        truncated: false,
    };
    let mut size = json_len(&out);
    for mut sec in memory_sections(memory_md.unwrap_or("")) {
        if let Some(f) = &filter {
            if !sec.heading.to_ascii_lowercase().contains(f.as_str()) {
                sec.bullets
                    .retain(|b| b.to_ascii_lowercase().contains(f.as_str()));
                if sec.bullets.is_empty() {
                    continue;
                }
            }
        }
        if sec.bullets.len() > MAX_BULLETS_PER_SECTION {
            sec.bullets.truncate(MAX_BULLETS_PER_SECTION);
            out.truncated = true;
        }
        let comma = usize::from(!out.sections.is_empty());
        let whole = json_len(&sec);
        if size + comma + whole <= MAX_KNOWLEDGE_BYTES {
            size += comma + whole;
            out.sections.push(sec);
            continue;
        }
        out.truncated = true;
        let mut part = MemorySection {
            heading: sec.heading,
            bullets: Vec::new(),
        };
        let mut part_len = json_len(&part);
        for b in sec.bullets {
            let add = json_len(&b) + usize::from(!part.bullets.is_empty());
            if size + comma + part_len + add > MAX_KNOWLEDGE_BYTES {
                break;
            }
            part_len += add;
            part.bullets.push(b);
        }
        if !part.bullets.is_empty() {
            out.sections.push(part);
        }
        break;
    }
    out
}

fn json_len<T: Serialize>(v: &T) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

fn heading(t: &str) -> Option<&str> {
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    (rest.is_empty() || rest.starts_with([' ', '\t']))
        .then(|| rest.trim().trim_end_matches('#').trim())
}

fn list_item(t: &str) -> Option<&str> {
    if let Some(rest) = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)) {
        return Some(rest.trim()).filter(|r| !r.is_empty());
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = t[digits..].strip_prefix(['.', ')'])?;
    rest.starts_with(' ')
        .then(|| rest.trim())
        .filter(|r| !r.is_empty())
}
