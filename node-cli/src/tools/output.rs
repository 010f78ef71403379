//! The kept output of a shell session: the tail of a byte stream, read
//! back as UTF-8 text cut on character boundaries.

use super::text::{incomplete_suffix, skip_partial_start, tail_chars};

/// Output kept per session, in characters (the tail is kept).
pub const OUTPUT_CAP: usize = 200_000;
/// Characters in a `tail` / `outputTail`.
pub const TAIL_CAP: usize = 4_000;
/// Bytes buffered: enough for OUTPUT_CAP characters of up to 4 bytes.
const KEEP_BYTES: usize = 4 * OUTPUT_CAP;

/// The tail of a byte stream, addressed by absolute offsets.
#[derive(Debug, Default)]
pub struct OutputBuffer {
    bytes: Vec<u8>,
    /// Absolute offset of `bytes[0]`: how much was dropped.
    start: u64,
}

impl OutputBuffer {
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > 2 * KEEP_BYTES {
            let drop = self.bytes.len() - KEEP_BYTES;
            self.bytes.drain(..drop);
            self.start += drop as u64;
        }
    }

    /// Absolute offset of the end.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Text from absolute offset `from` (or the oldest kept byte) to the
    /// end, the offset it stops at (an incomplete trailing character is
    /// left for later unless `all`), and whether bytes before it were lost.
    pub fn since(&self, from: u64, all: bool) -> (String, u64, bool) {
        let lost = from < self.start;
        let at = (from.max(self.start) - self.start) as usize;
        let mut slice = &self.bytes[at.min(self.bytes.len())..];
        let held = if all { 0 } else { incomplete_suffix(slice) };
        slice = &slice[..slice.len() - held];
        let stop = self.end() - held as u64;
        if lost {
            slice = skip_partial_start(slice);
        }
        (String::from_utf8_lossy(slice).into_owned(), stop, lost)
    }

    /// The last `cap` characters and whether anything was cut or lost.
    pub fn tail(&self, cap: usize) -> (String, bool) {
        let (text, _, lost) = self.since(0, true);
        let (tail, cut) = tail_chars(&text, cap);
        (tail.to_string(), cut || lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_keeps_a_utf8_tail() {
        let mut out = OutputBuffer::default();
        let chunk = "€".repeat(KEEP_BYTES / 3 + 1); // > KEEP_BYTES bytes
        out.push(b"x");
        out.push(chunk.as_bytes());
        out.push(chunk.as_bytes()); // trims the front inside a character
        assert_eq!((out.start - 1) % 3, 1);
        let (tail, cut) = out.tail(OUTPUT_CAP);
        assert!(cut);
        assert_eq!(tail, "€".repeat(OUTPUT_CAP));
        let (text, _, lost) = out.since(0, true);
        assert!(lost && text.chars().all(|c| c == '€'));
        // An incomplete character is held back until the rest arrives.
        let mut out = OutputBuffer::default();
        out.push(&"a€".as_bytes()[..2]);
        assert_eq!(out.since(0, false), ("a".to_string(), 1, false));
        out.push(&"a€".as_bytes()[2..]);
        assert_eq!(out.since(1, false), ("€".to_string(), 4, false));
    }
}
