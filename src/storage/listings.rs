//! Listings a prompt's assembly took, kept for the isolate's other runs.
//! A new session's first run then lists nothing when another run listed
//! the same prefix within `workspace.recheckSeconds`, under the same
//! workspace revision, with no write through this isolate since. Edits
//! made outside the gateway are still seen within that bound: a listing
//! is used only while younger than it.

use super::{ObjectStore, StoreResult, Version};
use std::collections::HashMap;
use std::future::Future;

/// The name a listing of the objects right under `prefix` (delimiter `/`)
/// is kept by.
pub fn top_level_listing(prefix: &str) -> String {
    format!("top|{prefix}")
}

/// The name a listing of every object under `prefix` is kept by.
pub fn tree_listing(prefix: &str) -> String {
    format!("tree|{prefix}")
}

/// A listing's objects: `(key, the version listed)`.
pub type Listed = Vec<(String, Version)>;

/// When a kept listing may stand for a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reuse<'a> {
    pub now_ms: u64,
    /// How old a listing may be (`workspace.recheckSeconds`; 0: never reused).
    pub within_ms: u64,
    /// The workspace revision the gateway last gave (edits made through it).
    pub workspace_rev: &'a str,
    /// The isolate's text writes when the assembly began (a listing taken
    /// for it is kept with them); a read compares the store's own count.
    pub writes: u64,
}

#[derive(Debug)]
struct Kept {
    objects: Listed,
    taken_ms: u64,
    writes: u64,
    workspace_rev: String,
}

/// The kept listings, by what was listed (the key the caller gives:
/// the listing's kind and prefix).
#[derive(Debug, Default)]
pub struct Listings {
    kept: HashMap<String, Kept>,
}

/// More distinct listings than this (agents × prefixes × days) and all are
/// dropped: each is one request to take again.
const MAX_KEPT: usize = 256;

impl Listings {
    /// The listing of `key` kept for `reuse`, if it may stand for a new
    /// one while the isolate has made `writes` text writes.
    /// Returns it with when it was taken.
    pub fn get(&self, key: &str, reuse: &Reuse, writes: u64) -> Option<(Listed, u64)> {
        self.standing(key, reuse, writes)
            .map(|kept| (kept.objects.clone(), kept.taken_ms))
    }

    /// What the listing of `key` kept for `reuse` says of the object
    /// `object`: its version, or `Some(None)` when it is not in the
    /// listing; `None` when no listing of `key` may stand for a new one.
    pub fn version_of(
        &self,
        key: &str,
        object: &str,
        reuse: &Reuse,
        writes: u64,
    ) -> Option<Option<&Version>> {
        let kept = self.standing(key, reuse, writes)?;
        Some(
            kept.objects
                .iter()
                .find(|(k, _)| k == object)
                .map(|(_, version)| version),
        )
    }

    fn standing(&self, key: &str, reuse: &Reuse, writes: u64) -> Option<&Kept> {
        let kept = self.kept.get(key)?;
        let fresh = reuse.now_ms.saturating_sub(kept.taken_ms) < reuse.within_ms;
        (fresh && kept.writes == writes && kept.workspace_rev == reuse.workspace_rev)
            .then_some(kept)
    }

    /// Keeps `objects`, listed for `reuse` (taken after its `writes`).
    pub fn keep(&mut self, key: String, objects: &Listed, reuse: &Reuse) {
        if reuse.within_ms == 0 {
            return;
        }
        if self.kept.len() >= MAX_KEPT && !self.kept.contains_key(&key) {
            self.kept.clear();
        }
        self.kept.insert(
            key,
            Kept {
                objects: objects.clone(),
                taken_ms: reuse.now_ms,
                writes: reuse.writes,
                workspace_rev: reuse.workspace_rev.to_string(),
            },
        );
    }
}

/// A listing as a run has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub objects: Listed,
    /// Pages requested (0: another run's listing stood for it).
    pub pages: u32,
    /// When that other run took it.
    pub taken_ms: Option<u64>,
}

/// What some listings taken together cost, and how old they are.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ListingCost {
    /// Pages requested.
    pub pages: u32,
    /// The longest chain of dependent pages (1 unless a listing had more
    /// than one page; 0 when none was requested).
    pub depth: u32,
    /// When the oldest listing another run took was taken.
    pub reused_from: Option<u64>,
}

impl ListingCost {
    pub fn add(&mut self, listing: &Listing) {
        *self = self.and(ListingCost {
            pages: listing.pages,
            depth: listing.pages,
            reused_from: listing.taken_ms,
        });
    }

    /// The cost of both, taken side by side.
    pub fn and(self, other: ListingCost) -> ListingCost {
        ListingCost {
            pages: self.pages + other.pages,
            depth: self.depth.max(other.depth),
            reused_from: self.reused_from.into_iter().chain(other.reused_from).min(),
        }
    }
}

/// `list`'s listing, or, with `reuse`, the one of `key` another run took
/// when it may stand for it. A listing taken is kept.
pub async fn list_or_reuse<S: ObjectStore + ?Sized>(
    store: &S,
    reuse: Option<&Reuse<'_>>,
    key: String,
    list: impl Future<Output = StoreResult<(Listed, u32)>>,
) -> StoreResult<Listing> {
    if let Some((objects, taken_ms)) = reuse.and_then(|r| store.texts().listed(&key, r)) {
        return Ok(Listing {
            objects,
            pages: 0,
            taken_ms: Some(taken_ms),
        });
    }
    let (objects, pages) = list.await?;
    if let Some(reuse) = reuse {
        store.texts().keep_listing(key, &objects, reuse);
    }
    Ok(Listing {
        objects,
        pages,
        taken_ms: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(keys: &[&str]) -> Listed {
        let version = |k: &str| Version {
            etag: format!("e-{k}"),
            uploaded_ms: 0,
        };
        keys.iter().map(|k| (k.to_string(), version(k))).collect()
    }

    #[test]
    fn a_listing_stands_while_young_unwritten_and_at_the_same_revision() {
        let taken = Reuse {
            now_ms: 10_000,
            within_ms: 60_000,
            workspace_rev: "r1",
            writes: 3,
        };
        let mut listings = Listings::default();
        listings.keep("root".into(), &listed(&["a", "b"]), &taken);
        let at = |now_ms, workspace_rev| Reuse {
            now_ms,
            workspace_rev,
            ..taken
        };
        assert_eq!(
            [
                listings.get("root", &at(69_999, "r1"), 3),
                listings.get("root", &at(70_000, "r1"), 3),
                listings.get("root", &at(20_000, "r2"), 3),
                listings.get("root", &at(20_000, "r1"), 4),
                listings.get("daily", &at(20_000, "r1"), 3),
            ],
            [Some((listed(&["a", "b"]), 10_000)), None, None, None, None]
        );
        // Rechecking on every run keeps nothing.
        let mut never = Listings::default();
        never.keep(
            "root".into(),
            &listed(&["a"]),
            &Reuse {
                within_ms: 0,
                ..taken
            },
        );
        assert_eq!(
            never.get(
                "root",
                &Reuse {
                    within_ms: 1,
                    ..taken
                },
                3
            ),
            None
        );
    }

    #[test]
    fn past_the_cap_everything_is_dropped() {
        let reuse = Reuse {
            now_ms: 0,
            within_ms: 1_000,
            workspace_rev: "",
            writes: 0,
        };
        let mut listings = Listings::default();
        for i in 0..MAX_KEPT {
            listings.keep(format!("p{i}"), &listed(&["x"]), &reuse);
        }
        listings.keep("p0".into(), &listed(&["y"]), &reuse);
        assert_eq!(listings.kept.len(), MAX_KEPT);
        listings.keep("new".into(), &listed(&["z"]), &reuse);
        assert_eq!(
            (listings.kept.len(), listings.get("new", &reuse, 0)),
            (1, Some((listed(&["z"]), 0)))
        );
    }
}
