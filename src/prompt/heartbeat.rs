//! The HEARTBEAT.md emptiness rule (r2-storage-layout.txt): a file holding
//! only whitespace, markdown headings without body text, HTML comments or
//! horizontal rules is empty, and adds no "Heartbeats" section.

/// Whether HEARTBEAT.md has nothing to act on.
pub fn heartbeat_is_empty(content: &str) -> bool {
    strip_html_comments(content).lines().all(|line| {
        let t = line.trim();
        t.is_empty() || is_heading(t) || is_rule(t)
    })
}

/// `content` without `<!-- … -->` comments (an unclosed comment runs to
/// the end).
pub fn strip_html_comments(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// An ATX heading: 1–6 `#` then a space or the end of the line.
fn is_heading(t: &str) -> bool {
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes) && t[hashes..].chars().next().is_none_or(char::is_whitespace)
}

/// A thematic break: three or more of one of `-`, `*`, `_`, spaces allowed.
fn is_rule(t: &str) -> bool {
    let marks: Vec<char> = t.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3 && ['-', '*', '_'].iter().any(|m| marks.iter().all(|c| c == m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_cases() {
        let cases = [
            "",
            "  \n\t\n",
            "# HEARTBEAT.md\n\n## Tasks\n",
            "<!-- add tasks here -->",
            "<!--\nmulti\nline\n-->\n# Title",
            "---\n***\n_ _ _\n",
            "# Title\n<!-- unclosed comment\n- a task inside it",
        ];
        for c in cases {
            assert!(heartbeat_is_empty(c), "{c:?} is empty");
        }
    }

    #[test]
    fn meaningful_cases() {
        let cases = [
            "- Check email",
            "# Tasks\nCheck the build.",
            "<!-- c --> do this",
            "#hashtag is text, not a heading",
            "-- two dashes are text",
            "####### seven hashes are text",
        ];
        for c in cases {
            assert!(!heartbeat_is_empty(c), "{c:?} is meaningful");
        }
    }

    #[test]
    fn comments_are_removed() {
        assert_eq!(strip_html_comments("a<!-- x -->b<!-- y"), "ab");
    }
}
