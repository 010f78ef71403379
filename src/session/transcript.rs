//! Reading a session's archives back: which R2 objects make up one session
//! id's transcript, in order, and which lines of each a page needs.

/// The session id an archive key belongs to, and its compaction time for a
/// `-part{ms}` archive (`None` for the reset archive). `None` for a key
/// that is not a session archive.
pub fn archive_name(key: &str) -> Option<(&str, Option<u64>)> {
    let stem = key.rsplit('/').next()?.strip_suffix(".jsonl.gz")?;
    if let Some((id, ms)) = stem.rsplit_once("-part") {
        if let Ok(ms) = ms.parse::<u64>() {
            return Some((id, Some(ms)));
        }
    }
    (!stem.is_empty()).then_some((stem, None))
}

/// The archives of `session_id` among `keys` (an R2 listing of the session
/// archive prefix): its compaction parts by time, then its reset archive.
/// Keys of other session ids that share the prefix are left out.
pub fn order_archives(session_id: &str, keys: &[String]) -> Vec<String> {
    let mut parts: Vec<(u64, &String)> = Vec::new();
    let mut full = None;
    for key in keys {
        match archive_name(key) {
            Some((id, None)) if id == session_id => full = Some(key),
            Some((id, Some(ms))) if id == session_id => parts.push((ms, key)),
            _ => {}
        }
    }
    parts.sort();
    parts
        .into_iter()
        .map(|(_, k)| k.clone())
        .chain(full.cloned())
        .collect()
}

/// One archive's share of a page: `(archive index, first line, line count)`.
pub type PageSlice = (usize, usize, usize);

/// The slices of the archives (with `counts[i]` messages each) that hold
/// messages `offset..offset + limit` of their concatenation.
pub fn page_slices(counts: &[u64], offset: usize, limit: usize) -> Vec<PageSlice> {
    let mut out = Vec::new();
    let (mut start, mut wanted) = (offset, limit);
    for (i, &count) in counts.iter().enumerate() {
        let count = count as usize;
        if wanted == 0 {
            break;
        }
        if start >= count {
            start -= count;
            continue;
        }
        let take = (count - start).min(wanted);
        out.push((i, start, take));
        wanted -= take;
        start = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_by_time_then_the_reset_archive() {
        let keys: Vec<String> = [
            "agents/main/sessions/abc.jsonl.gz",
            "agents/main/sessions/abc-part20.jsonl.gz",
            "agents/main/sessions/abc-part3.jsonl.gz",
            "agents/main/sessions/abcd-part1.jsonl.gz",
            "agents/main/sessions/abc-partx.jsonl.gz",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            order_archives("abc", &keys),
            [
                "agents/main/sessions/abc-part3.jsonl.gz",
                "agents/main/sessions/abc-part20.jsonl.gz",
                "agents/main/sessions/abc.jsonl.gz"
            ]
        );
    }

    #[test]
    fn archive_names() {
        let names = [
            "agents/main/sessions/abc.jsonl.gz",
            "agents/main/sessions/abc-part20.jsonl.gz",
            "agents/main/sessions/abc-partx.jsonl.gz",
            "agents/main/sessions/notes.txt",
            "agents/main/sessions/.jsonl.gz",
        ]
        .map(archive_name);
        assert_eq!(
            names,
            [
                Some(("abc", None)),
                Some(("abc", Some(20))),
                Some(("abc-partx", None)),
                None,
                None
            ]
        );
    }

    #[test]
    fn pages_span_archives() {
        assert_eq!(page_slices(&[3, 4, 5], 0, 2), vec![(0, 0, 2)]);
        assert_eq!(page_slices(&[3, 4, 5], 2, 4), vec![(0, 2, 1), (1, 0, 3)]);
        assert_eq!(page_slices(&[3, 4, 5], 7, 100), vec![(2, 0, 5)]);
        assert_eq!(page_slices(&[3, 4, 5], 12, 10), vec![]);
        assert_eq!(page_slices(&[], 0, 10), vec![]);
    }
}
