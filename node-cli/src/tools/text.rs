//! UTF-8-safe caps on text: keep the head or the tail of a string by
//! characters, and cut byte streams on character boundaries.

/// The first `max` characters of `s`, and whether anything was cut.
pub fn head_chars(s: &str, max: usize) -> (&str, bool) {
    match s.char_indices().nth(max) {
        Some((at, _)) => (&s[..at], true),
        None => (s, false),
    }
}

/// The last `max` characters of `s`, and whether anything was cut.
pub fn tail_chars(s: &str, max: usize) -> (&str, bool) {
    if max == 0 {
        return ("", !s.is_empty());
    }
    // A char is at most 4 bytes: short strings cannot exceed the cap.
    if s.len() <= max {
        return (s, false);
    }
    match s.char_indices().rev().nth(max - 1) {
        Some((0, _)) | None => (s, false),
        Some((at, _)) => (&s[at..], true),
    }
}

/// `s` cut to `max` characters with an ellipsis appended when cut.
pub fn cap_line(s: &str, max: usize) -> (String, bool) {
    let (head, cut) = head_chars(s, max);
    if cut {
        (format!("{head}…"), true)
    } else {
        (head.to_string(), false)
    }
}

/// About `max` characters of `line` around byte offset `at` (a match):
/// the whole line when short enough, else a window that starts a little
/// before `at`, with ellipses where text was cut.
pub fn excerpt(line: &str, at: usize, max: usize) -> (String, bool) {
    if line.len() <= max || line.chars().count() <= max {
        return (line.to_string(), false);
    }
    let mut at = at.min(line.len());
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    // Up to a fifth of the window as leading context.
    let lead = max / 5;
    let (before, _) = tail_chars(&line[..at], lead);
    let start = at - before.len();
    if start == 0 {
        return cap_line(line, max);
    }
    let (body, cut) = head_chars(&line[start..], max);
    let tail = if cut { "…" } else { "" };
    (format!("…{body}{tail}"), true)
}

/// Drops the continuation bytes a byte slice starts with (when it was cut
/// in the middle of a character).
pub fn skip_partial_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    &bytes[skip..]
}

/// How many bytes at the end of `bytes` are an incomplete UTF-8 sequence
/// (more may still arrive); 0 when the slice ends on a boundary.
pub fn incomplete_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let b = bytes[bytes.len() - back];
        if (b & 0xC0) == 0x80 {
            continue; // continuation byte: look further back
        }
        let need = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0, // invalid lead byte: lossy decoding handles it
        };
        return if need > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_cut_on_char_boundaries() {
        assert_eq!(head_chars("héllo", 2), ("hé", true));
        assert_eq!(head_chars("hé", 2), ("hé", false));
        assert_eq!(tail_chars("héllo→", 3), ("lo→", true));
        assert_eq!(tail_chars("→→", 2), ("→→", false));
        assert_eq!(tail_chars("ab", 0), ("", true));
        assert_eq!(cap_line("ééé", 2), ("éé…".to_string(), true));
    }

    #[test]
    fn excerpt_centres_on_the_match() {
        let line = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let (ex, cut) = excerpt(&line, 500, 50);
        assert!(cut);
        assert_eq!(ex, format!("…{}NEEDLE{}…", "a".repeat(10), "b".repeat(34)));
        assert_eq!(excerpt("short", 0, 50), ("short".to_string(), false));
    }

    #[test]
    fn partial_sequences() {
        let s = "a€".as_bytes(); // € is 3 bytes
        assert_eq!(incomplete_suffix(&s[..2]), 1);
        assert_eq!(incomplete_suffix(&s[..3]), 2);
        assert_eq!(incomplete_suffix(s), 0);
        assert_eq!(incomplete_suffix(b"abc"), 0);
        assert_eq!(skip_partial_start(&"€x".as_bytes()[1..]), b"x");
    }
}
