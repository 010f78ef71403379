//! The isolate's cache of prepared media (an image's base64, a document's
//! text), by R2 key, within a byte budget; the least recently used go
//! first. A long conversation with photos then reads each from R2 once,
//! not at every model call. R2 media never change under a key (a key is a
//! fresh UUID), so an entry is good until the session's reset deletes it.

use std::collections::HashMap;
use std::rc::Rc;

/// The budget v1 used (and the seed layout names): 50 MB.
pub const DEFAULT_CAPACITY: usize = 50 * 1024 * 1024;

/// A prepared file, as a model call uses it.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// An image: its type as its bytes say, base64, its size in bytes and
    /// pixels (`None` when the header could not be read).
    Image {
        mime: String,
        base64: Rc<str>,
        bytes: u64,
        pixels: Option<(u32, u32)>,
    },
    /// A document's text (UTF-8; invalid bytes replaced).
    Text(Rc<str>),
    /// A file that is not text, or an image in a format models do not
    /// take: what the model is told instead.
    Unreadable(Rc<str>),
}

impl Prepared {
    /// What it costs to hold.
    pub fn weight(&self) -> usize {
        match self {
            Self::Image { base64, .. } => base64.len(),
            Self::Text(t) | Self::Unreadable(t) => t.len(),
        }
    }
}

#[derive(Debug)]
pub struct MediaCache {
    entries: HashMap<String, (Prepared, u64)>,
    bytes: usize,
    capacity: usize,
    clock: u64,
}

impl Default for MediaCache {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl MediaCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
            capacity,
            clock: 0,
        }
    }

    /// The entry of `key`, now the most recently used.
    pub fn get(&mut self, key: &str) -> Option<Prepared> {
        self.clock += 1;
        let clock = self.clock;
        let (value, used) = self.entries.get_mut(key)?;
        *used = clock;
        Some(value.clone())
    }

    /// Keeps `value` under `key`, dropping the least recently used until
    /// it fits. An entry over half the budget is not kept: one file must
    /// not empty the cache of a whole conversation.
    pub fn put(&mut self, key: &str, value: Prepared) {
        self.remove(key);
        let weight = value.weight();
        if weight > self.capacity / 2 {
            return;
        }
        while self.bytes + weight > self.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.remove(&k),
                None => break,
            }
        }
        self.clock += 1;
        self.bytes += weight;
        self.entries.insert(key.to_string(), (value, self.clock));
    }

    pub fn remove(&mut self, key: &str) {
        if let Some((value, _)) = self.entries.remove(key) {
            self.bytes -= value.weight();
        }
    }

    /// Forgets every key under `prefix` (a session's media, on its reset).
    pub fn remove_prefix(&mut self, prefix: &str) {
        let keys: Vec<String> = self
            .entries
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for key in keys {
            self.remove(&key);
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
