use std::sync::Arc;

use bytes::Bytes;
use wacore::store::traits::{Backend, SignalStore};

use super::{backend, differential, run};
use crate::store::sql::{Sql, Value};

const ALICE: &str = "15550000001@s.whatsapp.net";
const ALICE_2: &str = "15550000001:2@s.whatsapp.net";
const BOB: &str = "15550000002:3@lid";

#[test]
fn identities_round_trip_overwrite_batch_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Option<[u8; 32]>> {
        let mut seen = vec![b.load_identity(ALICE).await.unwrap()];
        b.put_identity(ALICE, [1; 32]).await.unwrap();
        seen.push(b.load_identity(ALICE).await.unwrap());
        b.put_identity(ALICE, [2; 32]).await.unwrap();
        seen.push(b.load_identity(ALICE).await.unwrap());
        b.put_identities_batch(&[(Arc::from(ALICE), [3; 32]), (Arc::from(BOB), [4; 32])])
            .await
            .unwrap();
        seen.push(b.load_identity(ALICE).await.unwrap());
        seen.push(b.load_identity(BOB).await.unwrap());
        b.delete_identity(ALICE).await.unwrap();
        seen.push(b.load_identity(ALICE).await.unwrap());
        seen.push(b.load_identity(BOB).await.unwrap());
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![
            None,
            Some([1; 32]),
            Some([2; 32]),
            Some([3; 32]),
            Some([4; 32]),
            None,
            Some([4; 32])
        ]
    );
}

#[test]
fn sessions_round_trip_overwrite_batch_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<(Option<Bytes>, bool)> {
        let mut seen = Vec::new();
        macro_rules! look {
            ($a:expr) => {
                seen.push((
                    b.get_session($a).await.unwrap(),
                    b.has_session($a).await.unwrap(),
                ))
            };
        }
        look!(ALICE);
        b.put_session(ALICE, b"one").await.unwrap();
        look!(ALICE);
        b.put_session(ALICE, b"two").await.unwrap();
        look!(ALICE);
        b.put_sessions_batch(&[
            (Arc::from(ALICE), Bytes::from_static(b"three")),
            (Arc::from(ALICE_2), Bytes::from_static(b"four")),
        ])
        .await
        .unwrap();
        look!(ALICE);
        look!(ALICE_2);
        b.delete_session(ALICE).await.unwrap();
        look!(ALICE);
        look!(ALICE_2);
        seen
    }
    let some = |s: &'static [u8]| (Some(Bytes::from_static(s)), true);
    assert_eq!(
        differential!(scenario),
        vec![
            (None, false),
            some(b"one"),
            some(b"two"),
            some(b"three"),
            some(b"four"),
            (None, false),
            some(b"four"),
        ]
    );
}

#[test]
fn signal_state_for_user_matches_whole_user_parts_only() {
    async fn scenario<B: Backend>(b: &B) -> Vec<bool> {
        b.put_session("123:4@s.whatsapp.net", b"s").await.unwrap();
        b.put_identity("777@lid", [7; 32]).await.unwrap();
        let mut seen = Vec::new();
        for user in ["123", "12", "1234", "777", "77", "7777", "123:4", "none"] {
            seen.push(b.has_signal_state_for_user(user).await.unwrap());
        }
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![true, false, false, true, false, false, true, false]
    );
}

#[test]
fn prekeys_round_trip_batch_order_and_max_id() {
    async fn scenario<B: Backend>(b: &B) -> (u32, Vec<Option<Bytes>>, Vec<(u32, Bytes)>, u32, u32) {
        let empty_max = b.get_max_prekey_id().await.unwrap();
        b.store_prekey(7, b"seven", false).await.unwrap();
        b.store_prekey(7, b"seven again", true).await.unwrap();
        b.store_prekeys_batch(
            &[
                (9, Bytes::from_static(b"nine")),
                (u32::MAX, Bytes::from_static(b"max")),
            ],
            false,
        )
        .await
        .unwrap();
        let singles = vec![
            b.load_prekey(7).await.unwrap(),
            b.load_prekey(8).await.unwrap(),
            b.load_prekey(u32::MAX).await.unwrap(),
        ];
        let batch = b.load_prekeys_batch(&[u32::MAX, 8, 9, 7]).await.unwrap();
        let max = b.get_max_prekey_id().await.unwrap();
        b.remove_prekey(u32::MAX).await.unwrap();
        (
            empty_max,
            singles,
            batch,
            max,
            b.get_max_prekey_id().await.unwrap(),
        )
    }
    assert_eq!(
        differential!(scenario),
        (
            0,
            vec![
                Some(Bytes::from_static(b"seven again")),
                None,
                Some(Bytes::from_static(b"max")),
            ],
            vec![
                (u32::MAX, Bytes::from_static(b"max")),
                (9, Bytes::from_static(b"nine")),
                (7, Bytes::from_static(b"seven again")),
            ],
            u32::MAX,
            9,
        )
    );
}

/// More keys than one statement may bind: the batch is split, none lost.
#[test]
fn prekey_batches_larger_than_one_statement() {
    async fn scenario<B: Backend>(b: &B) -> (usize, u32, Vec<(u32, Bytes)>) {
        let keys: Vec<(u32, Bytes)> = (1..=812u32)
            .map(|id| (id, Bytes::from(id.to_be_bytes().to_vec())))
            .collect();
        b.store_prekeys_batch(&keys, false).await.unwrap();
        let ids: Vec<u32> = (1..=900).collect();
        let loaded = b.load_prekeys_batch(&ids).await.unwrap();
        b.mark_prekeys_uploaded(&ids).await.unwrap();
        let sample = b.load_prekeys_batch(&[812, 1, 400]).await.unwrap();
        (loaded.len(), b.get_max_prekey_id().await.unwrap(), sample)
    }
    let be = |id: u32| (id, Bytes::from(id.to_be_bytes().to_vec()));
    assert_eq!(
        differential!(scenario),
        (812, 812, vec![be(812), be(1), be(400)])
    );
}

/// The uploaded flag (which `InMemoryBackend` does not keep): set by the
/// store calls, and marking never brings back a consumed key.
#[test]
fn mark_prekeys_uploaded_updates_without_resurrecting() {
    let b = backend();
    run(async {
        b.store_prekey(1, b"a", false).await.unwrap();
        b.store_prekeys_batch(&[(2, Bytes::from_static(b"b"))], true)
            .await
            .unwrap();
        b.store_prekey(3, b"c", false).await.unwrap();
        b.remove_prekey(3).await.unwrap();
        b.mark_prekeys_uploaded(&[1, 3]).await.unwrap();
        assert_eq!(b.load_prekey(3).await.unwrap(), None);
    });
    let rows = b
        .sql()
        .query("SELECT id, uploaded FROM wa_prekeys ORDER BY id", &[])
        .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(1), Value::Int(1)],
            vec![Value::Int(2), Value::Int(1)]
        ]
    );
}

#[test]
fn signed_prekeys_round_trip_list_and_remove() {
    async fn scenario<B: Backend>(
        b: &B,
    ) -> (
        Vec<Option<Vec<u8>>>,
        Vec<(u32, Vec<u8>)>,
        Vec<(u32, Vec<u8>)>,
    ) {
        let missing = b.load_signed_prekey(1).await.unwrap();
        b.store_signed_prekey(2, b"two").await.unwrap();
        b.store_signed_prekey(1, b"one").await.unwrap();
        b.store_signed_prekey(2, b"two again").await.unwrap();
        let loaded = vec![missing, b.load_signed_prekey(2).await.unwrap()];
        let mut all = b.load_all_signed_prekeys().await.unwrap();
        all.sort();
        b.remove_signed_prekey(1).await.unwrap();
        (loaded, all, b.load_all_signed_prekeys().await.unwrap())
    }
    assert_eq!(
        differential!(scenario),
        (
            vec![None, Some(b"two again".to_vec())],
            vec![(1, b"one".to_vec()), (2, b"two again".to_vec())],
            vec![(2, b"two again".to_vec())],
        )
    );
    // Ours lists by id without being sorted.
    let b = backend();
    run(async {
        for id in [5, 3, 4] {
            b.store_signed_prekey(id, &[id as u8]).await.unwrap();
        }
        let ids: Vec<u32> = b
            .load_all_signed_prekeys()
            .await
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, vec![3, 4, 5]);
    });
}

#[test]
fn sender_keys_round_trip_overwrite_batch_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Option<Vec<u8>>> {
        let group = "120363000000000001@g.us::15550000001:2@s.whatsapp.net";
        let mut seen = vec![b.get_sender_key(group).await.unwrap()];
        b.put_sender_key(group, b"k1").await.unwrap();
        seen.push(b.get_sender_key(group).await.unwrap());
        b.put_sender_keys_batch(&[
            (Arc::from(group), Bytes::from_static(b"k2")),
            (Arc::from("other"), Bytes::from_static(b"k3")),
        ])
        .await
        .unwrap();
        seen.push(b.get_sender_key(group).await.unwrap());
        seen.push(b.get_sender_key("other").await.unwrap());
        b.delete_sender_key(group).await.unwrap();
        seen.push(b.get_sender_key(group).await.unwrap());
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![
            None,
            Some(b"k1".to_vec()),
            Some(b"k2".to_vec()),
            Some(b"k3".to_vec()),
            None
        ]
    );
}

/// A row of the wrong shape is an error naming the column, not a panic and
/// not the bytes.
#[test]
fn malformed_rows_are_errors_without_values() {
    let b = backend();
    b.sql()
        .query(
            "INSERT INTO wa_identities (address, key) VALUES ('short', X'0102'), ('text', 'secret-text')",
            &[],
        )
        .unwrap();
    run(async {
        let short = b.load_identity("short").await.unwrap_err().to_string();
        assert_eq!(
            short,
            "data validation failed: column 0 has 2 bytes, not 32"
        );
        let text = b.load_identity("text").await.unwrap_err().to_string();
        assert_eq!(text, "data validation failed: column 0 is TEXT, not BLOB");
    });
}
