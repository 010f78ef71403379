//! Where a session's media live in R2: `media/{sessionKey}/{uuid}.{ext}`
//! (the seed layout), so a reset deletes them by prefix.

use super::mime::extension;

/// `media/{sessionKey}/`: everything of one session.
pub fn session_prefix(session_key: &str) -> String {
    format!("media/{session_key}/")
}

/// The key of a new file of type `mime` in `session_key`; `id` is a
/// fresh UUID.
pub fn media_key(session_key: &str, id: &str, mime: &str) -> String {
    format!("{}{id}.{}", session_prefix(session_key), extension(mime))
}

/// Whether `key` is a file of `session_key`'s media (directly under its
/// prefix, a plain file name): a client naming a key in `chat.send` may
/// only name its own session's files.
pub fn in_session(key: &str, session_key: &str) -> bool {
    key.strip_prefix(&session_prefix(session_key))
        .is_some_and(|name| {
            !name.is_empty()
                && !name.contains('/')
                && !name.starts_with('.')
                && !name.contains("..")
        })
}

/// Whether `key` is anybody's media (a channel may read these back).
pub fn is_media_key(key: &str) -> bool {
    key.strip_prefix("media/").is_some_and(|rest| {
        rest.split_once('/')
            .is_some_and(|(session, name)| !session.is_empty() && !name.is_empty())
            && !rest.contains("..")
    })
}

/// The query of `url` as (name, value) pairs, `+` and `%XX` decoded (an
/// invalid escape is kept as written).
pub fn query_pairs(url: &str) -> Vec<(String, String)> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or_default();
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
