//! `multipart/form-data` as the fakes read it (RFC 7578): the parts of a
//! body, each with its name, file name, type and bytes. Strict where the
//! real services are: a body that is not well framed is an error, not a
//! guess, so a malformed upload fails in tests as it would in production.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

impl Part {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("boundary"))
            .then(|| v.trim().trim_matches('"').to_string())
            .filter(|b| !b.is_empty())
    })
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// The parts of `body` for `content_type`, or what is wrong with it.
pub fn parse(content_type: &str, body: &[u8]) -> Result<Vec<Part>, String> {
    let boundary = boundary(content_type)
        .ok_or_else(|| format!("not multipart/form-data with a boundary: {content_type:?}"))?;
    let delimiter = format!("--{boundary}").into_bytes();
    if !body.starts_with(&delimiter) {
        return Err("the body does not start with the boundary".into());
    }
    let mut parts = Vec::new();
    let mut at = delimiter.len();
    loop {
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        if !body[at..].starts_with(b"\r\n") {
            return Err("a boundary is not followed by CRLF".into());
        }
        at += 2;
        let head_end = find(body, b"\r\n\r\n", at).ok_or("a part has no end of headers")?;
        let head = std::str::from_utf8(&body[at..head_end]).map_err(|_| "headers are not UTF-8")?;
        let mut part = Part {
            name: String::new(),
            filename: None,
            content_type: None,
            data: Vec::new(),
        };
        let mut disposition = false;
        for line in head.split("\r\n") {
            let (k, v) = line
                .split_once(':')
                .ok_or_else(|| format!("bad header line {line:?}"))?;
            match k.trim().to_ascii_lowercase().as_str() {
                "content-disposition" => {
                    let mut items = v.split(';').map(str::trim);
                    if items.next() != Some("form-data") {
                        return Err(format!("Content-Disposition is not form-data: {v:?}"));
                    }
                    disposition = true;
                    for item in items {
                        let Some((pk, pv)) = item.split_once('=') else {
                            continue;
                        };
                        let pv = pv.trim().trim_matches('"').to_string();
                        match pk.trim() {
                            "name" => part.name = pv,
                            "filename" => part.filename = Some(pv),
                            _ => {}
                        }
                    }
                }
                "content-type" => part.content_type = Some(v.trim().to_string()),
                _ => {}
            }
        }
        if !disposition || part.name.is_empty() {
            return Err("a part has no Content-Disposition name".into());
        }
        let data_start = head_end + 4;
        let mut close = b"\r\n".to_vec();
        close.extend_from_slice(&delimiter);
        let data_end =
            find(body, &close, data_start).ok_or("a part is not closed by the boundary")?;
        part.data = body[data_start..data_end].to_vec();
        parts.push(part);
        at = data_end + close.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_with_files_and_fields() {
        let body = b"--XY\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
--XY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.ogg\"\r\nContent-Type: audio/ogg\r\n\r\nOgg\r\nS\r\n--XY--\r\n";
        let parts = parse("multipart/form-data; boundary=XY", body).unwrap();
        assert_eq!(
            parts,
            vec![
                Part {
                    name: "model".into(),
                    filename: None,
                    content_type: None,
                    data: b"whisper-1".to_vec()
                },
                Part {
                    name: "file".into(),
                    filename: Some("v.ogg".into()),
                    content_type: Some("audio/ogg".into()),
                    data: b"Ogg\r\nS".to_vec()
                },
            ]
        );
        assert!(parse("application/json", body).is_err());
        assert!(parse("multipart/form-data; boundary=XY", b"--XY\r\nnope").is_err());
        assert_eq!(
            boundary("multipart/form-data; boundary=\"a b\""),
            Some("a b".into())
        );
    }
}
