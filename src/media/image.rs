//! What an image file really is, read from its first bytes: its format
//! (a platform's declared type can be wrong, and Anthropic refuses an
//! image whose bytes do not match the type sent with it) and its size in
//! pixels (providers refuse images past a size). No decoding: headers only.

/// The type the bytes say, for the formats models take.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Width and height in pixels, from the header of a JPEG, PNG, GIF or WebP.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    match sniff(bytes)? {
        "image/png" => {
            let w = be32(bytes.get(16..20)?);
            let h = be32(bytes.get(20..24)?);
            Some((w, h))
        }
        "image/gif" => Some((
            u32::from(le16(bytes.get(6..8)?)),
            u32::from(le16(bytes.get(8..10)?)),
        )),
        "image/webp" => webp(bytes),
        _ => jpeg(bytes),
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn le16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn le24(b: &[u8]) -> u32 {
    u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16
}

/// The first start-of-frame marker's size, walking the segments.
fn jpeg(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 4 <= bytes.len() {
        if bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        // Fill bytes and markers without a length.
        if marker == 0xFF {
            i += 1;
            continue;
        }
        if (0xD0..=0xD9).contains(&marker) || marker == 0x01 {
            i += 2;
            continue;
        }
        let len = usize::from(be16(bytes.get(i + 2..i + 4)?));
        let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            let h = be16(bytes.get(i + 5..i + 7)?);
            let w = be16(bytes.get(i + 7..i + 9)?);
            return Some((u32::from(w), u32::from(h)));
        }
        i += 2 + len;
    }
    None
}

fn webp(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => {
            // Frame tag (3), start code (3), then 14-bit width and height.
            let w = le16(bytes.get(26..28)?) & 0x3FFF;
            let h = le16(bytes.get(28..30)?) & 0x3FFF;
            Some((u32::from(w), u32::from(h)))
        }
        b"VP8L" => {
            let b = bytes.get(21..25)?;
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(bytes.get(24..27)?) + 1, le24(bytes.get(27..30)?) + 1)),
        _ => None,
    }
}
