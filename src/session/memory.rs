//! Daily memory files (`agents/{agentId}/memory/{YYYY-MM-DD}.md`): where
//! compaction and pre-reset extraction append what is worth remembering.
//!
//! R2 cannot append, so the shell reads the file, calls [`append_section`]
//! and writes the result back. Each section carries an HTML-comment marker
//! naming its origin, so repeating the append after a crash changes nothing.

use crate::time::{date_string, hh_mm, TimeZone};

/// Where memories about the moment `at_ms` go: the daily file of that
/// date in the user's time zone (not UTC) and the `HH:MM`
/// for the section header. Compaction uses "now", a reset the last activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryTarget {
    pub key: String,
    pub time: String,
}

impl MemoryTarget {
    pub fn at(agent_id: &str, tz: &dyn TimeZone, at_ms: i64) -> Self {
        Self {
            key: memory_file_key(agent_id, &date_string(tz, at_ms)),
            time: hh_mm(tz, at_ms),
        }
    }
}

/// Where a memory section came from; decides its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySource {
    /// `### Extracted from context compaction (HH:MM)`
    Compaction,
    /// `### Extracted before session reset (HH:MM)`
    Reset,
}

impl MemorySource {
    fn label(self) -> &'static str {
        match self {
            MemorySource::Compaction => "Extracted from context compaction",
            MemorySource::Reset => "Extracted before session reset",
        }
    }
}

/// `agents/{agentId}/memory/{date}.md` (`date` is `YYYY-MM-DD`).
pub fn memory_file_key(agent_id: &str, date: &str) -> String {
    format!("agents/{agent_id}/memory/{date}.md")
}

/// The marker of the section written when session `session_id` is reset.
pub fn reset_marker(session_id: &str) -> String {
    format!("<!-- gsv:reset:{session_id} -->")
}

/// The marker of the section written by the compaction whose part archive
/// has suffix `part_ms`.
pub fn compaction_marker(session_id: &str, part_ms: i64) -> String {
    format!("<!-- gsv:compaction:{session_id}:{part_ms} -->")
}

/// One section: header with the local time `hh_mm`, the marker, the
/// memories. `None` when there is nothing to remember.
pub fn memory_section(
    source: MemorySource,
    hh_mm: &str,
    marker: &str,
    memories: &str,
) -> Option<String> {
    let memories = memories.trim();
    if memories.is_empty() {
        return None;
    }
    Some(format!(
        "### {} ({hh_mm})\n{marker}\n{memories}\n",
        source.label()
    ))
}

/// The file content after appending `section` (separated by a blank
/// line), or `None` when the file already holds a section with `marker`.
pub fn append_section(existing: Option<&str>, marker: &str, section: &str) -> Option<String> {
    match existing {
        Some(text) if text.contains(marker) => None,
        Some(text) if !text.trim().is_empty() => {
            Some(format!("{}\n\n{section}", text.trim_end_matches('\n')))
        }
        _ => Some(section.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_the_user_time_zone() {
        let t = crate::time::test_tz::utc("2026-03-01T23:30:00Z");
        assert_eq!(
            MemoryTarget::at("main", &crate::time::test_tz::Tz::named("Asia/Tokyo"), t),
            MemoryTarget {
                key: "agents/main/memory/2026-03-02.md".into(),
                time: "08:30".into()
            }
        );
        assert_eq!(
            MemoryTarget::at("main", &crate::time::Utc, t),
            MemoryTarget {
                key: "agents/main/memory/2026-03-01.md".into(),
                time: "23:30".into()
            }
        );
    }

    #[test]
    fn sections_and_appends() {
        let marker = compaction_marker("s1", 1700);
        let section = memory_section(
            MemorySource::Compaction,
            "09:05",
            &marker,
            "\n- likes tea\n",
        )
        .unwrap();
        assert_eq!(
            section,
            "### Extracted from context compaction (09:05)\n<!-- gsv:compaction:s1:1700 -->\n- likes tea\n"
        );
        assert_eq!(
            append_section(None, &marker, &section),
            Some(section.clone())
        );
        assert_eq!(
            append_section(Some("# Notes\n- old\n\n\n"), &marker, &section),
            Some(format!("# Notes\n- old\n\n{section}"))
        );
        let once = append_section(Some("x"), &marker, &section).unwrap();
        assert_eq!(append_section(Some(&once), &marker, &section), None);

        let reset = reset_marker("s1");
        assert_eq!(
            memory_section(MemorySource::Reset, "23:59", &reset, "- moved to Berlin"),
            Some("### Extracted before session reset (23:59)\n<!-- gsv:reset:s1 -->\n- moved to Berlin\n".into())
        );
        assert_eq!(
            memory_section(MemorySource::Reset, "23:59", &reset, "  \n"),
            None
        );
        assert_eq!(
            memory_file_key("main", "2026-03-01"),
            "agents/main/memory/2026-03-01.md"
        );
    }
}
