//! Files the end-to-end tests send through chat apps.

/// A JPEG of `len` bytes: its header (a 64×48 frame) then filler.
pub fn jpeg(len: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    b.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x30, 0x00, 0x40]);
    b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    while b.len() < len - 2 {
        b.push((b.len() % 251) as u8);
    }
    b.extend_from_slice(&[0xFF, 0xD9]);
    b
}
