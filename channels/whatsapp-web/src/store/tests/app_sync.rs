use std::collections::HashMap;

use wacore::appstate::hash::HashState;
use wacore::appstate::processor::AppStateMutationMAC;
use wacore::store::traits::{AppStateSyncKey, AppSyncStore, Backend};

use super::{backend, differential, run};

type Key = (Vec<u8>, Vec<u8>, i64);

fn key(data: u8, timestamp: i64) -> AppStateSyncKey {
    AppStateSyncKey {
        key_data: vec![data; 32],
        fingerprint: vec![data, 1, 2],
        timestamp,
    }
}

fn fields(k: Option<AppStateSyncKey>) -> Option<Key> {
    k.map(|k| (k.key_data, k.fingerprint, k.timestamp))
}

#[test]
fn sync_keys_round_trip_and_latest_is_last_stored() {
    async fn scenario<B: Backend>(b: &B) -> (Vec<Option<Key>>, Vec<Option<Vec<u8>>>) {
        let mut keys = vec![fields(b.get_sync_key(b"\0\0\0\x01").await.unwrap())];
        let mut latest = vec![b.get_latest_sync_key_id().await.unwrap()];
        b.set_sync_key(b"\0\0\0\x02", key(2, 20)).await.unwrap();
        latest.push(b.get_latest_sync_key_id().await.unwrap());
        b.set_sync_key(b"\0\0\0\x01", key(1, 10)).await.unwrap();
        latest.push(b.get_latest_sync_key_id().await.unwrap());
        keys.push(fields(b.get_sync_key(b"\0\0\0\x01").await.unwrap()));
        // Storing an existing key again makes it the latest, with its new value.
        b.set_sync_key(b"\0\0\0\x02", key(3, 30)).await.unwrap();
        latest.push(b.get_latest_sync_key_id().await.unwrap());
        keys.push(fields(b.get_sync_key(b"\0\0\0\x02").await.unwrap()));
        (keys, latest)
    }
    let (keys, latest) = differential!(scenario);
    assert_eq!(
        keys,
        vec![None, fields(Some(key(1, 10))), fields(Some(key(3, 30)))]
    );
    assert_eq!(
        latest,
        vec![
            None,
            Some(b"\0\0\0\x02".to_vec()),
            Some(b"\0\0\0\x01".to_vec()),
            Some(b"\0\0\0\x02".to_vec()),
        ]
    );
}

type State = (u64, Vec<u8>, Vec<(String, Vec<u8>)>, bool);

fn state(s: HashState) -> State {
    let mut map: Vec<(String, Vec<u8>)> = s.index_value_map.into_iter().collect();
    map.sort();
    (s.version, s.hash.to_vec(), map, s.mac_mismatch_fatal)
}

#[test]
fn versions_default_round_trip_and_overwrite() {
    async fn scenario<B: Backend>(b: &B) -> Vec<State> {
        let mut seen = vec![state(b.get_version("regular").await.unwrap())];
        let mut first = HashState {
            version: 7,
            hash: [9; 128],
            ..HashState::default()
        };
        first.index_value_map =
            HashMap::from([("a".to_string(), vec![1, 2]), ("b".to_string(), vec![])]);
        b.set_version("regular", first).await.unwrap();
        seen.push(state(b.get_version("regular").await.unwrap()));
        let second = HashState {
            version: u64::MAX >> 1,
            hash: [4; 128],
            index_value_map: HashMap::from([("c".to_string(), vec![3])]),
            mac_mismatch_fatal: true,
        };
        b.set_version("regular", second).await.unwrap();
        seen.push(state(b.get_version("regular").await.unwrap()));
        seen.push(state(b.get_version("critical_block").await.unwrap()));
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![
            (0, vec![0; 128], vec![], false),
            (
                7,
                vec![9; 128],
                vec![("a".into(), vec![1, 2]), ("b".into(), vec![])],
                false
            ),
            (
                u64::MAX >> 1,
                vec![4; 128],
                vec![("c".into(), vec![3])],
                true
            ),
            (0, vec![0; 128], vec![], false),
        ]
    );
}

/// A version past `i64::MAX` cannot be an INTEGER: refused, not wrapped.
#[test]
fn version_beyond_i64_is_refused() {
    let b = backend();
    run(async {
        let state = HashState {
            version: u64::MAX,
            ..HashState::default()
        };
        assert!(b.set_version("regular", state).await.is_err());
        assert_eq!(b.get_version("regular").await.unwrap().version, 0);
    });
}

fn mac(index: u8, value: u8) -> AppStateMutationMAC {
    AppStateMutationMAC {
        index_mac: vec![index; 32],
        value_mac: vec![value; 32],
    }
}

#[test]
fn mutation_macs_get_batch_delete_and_clear() {
    type Seen = (
        Vec<Option<Vec<u8>>>,
        Vec<([u8; 32], Vec<u8>)>,
        Vec<Option<Vec<u8>>>,
    );
    async fn scenario<B: Backend>(b: &B) -> Seen {
        b.put_mutation_macs("regular", 1, &[mac(1, 10), mac(2, 20), mac(3, 30)])
            .await
            .unwrap();
        b.put_mutation_macs("regular", 2, &[mac(2, 21)])
            .await
            .unwrap();
        b.put_mutation_macs("critical", 1, &[mac(1, 11)])
            .await
            .unwrap();
        let singles = vec![
            b.get_mutation_mac("regular", &[2; 32]).await.unwrap(),
            b.get_mutation_mac("critical", &[1; 32]).await.unwrap(),
            b.get_mutation_mac("critical", &[2; 32]).await.unwrap(),
        ];
        let mut batch: Vec<([u8; 32], Vec<u8>)> = b
            .get_mutation_macs("regular", &[[1; 32], [2; 32], [9; 32]])
            .await
            .unwrap()
            .into_iter()
            .collect();
        batch.sort();
        b.delete_mutation_macs("regular", &[vec![1; 32], vec![9; 32]])
            .await
            .unwrap();
        let after_delete = b.get_mutation_mac("regular", &[1; 32]).await.unwrap();
        b.clear_mutation_macs("regular").await.unwrap();
        let after = vec![
            after_delete,
            b.get_mutation_mac("regular", &[3; 32]).await.unwrap(),
            b.get_mutation_mac("critical", &[1; 32]).await.unwrap(),
        ];
        (singles, batch, after)
    }
    assert_eq!(
        differential!(scenario),
        (
            vec![Some(vec![21; 32]), Some(vec![11; 32]), None],
            vec![([1; 32], vec![10; 32]), ([2; 32], vec![21; 32])],
            vec![None, None, Some(vec![11; 32])],
        )
    );
}

/// A snapshot's worth of MACs: more than one statement binds.
#[test]
fn mutation_mac_batches_larger_than_one_statement() {
    async fn scenario<B: Backend>(b: &B) -> (usize, usize) {
        let macs: Vec<AppStateMutationMAC> = (0..=255).map(|i| mac(i, !i)).collect();
        b.put_mutation_macs("regular_high", 3, &macs).await.unwrap();
        let all: Vec<[u8; 32]> = (0..=255).map(|i| [i; 32]).collect();
        let found = b.get_mutation_macs("regular_high", &all).await.unwrap();
        assert!(found
            .iter()
            .all(|(index, value)| *value == vec![!index[0]; 32]));
        let evens: Vec<Vec<u8>> = (0..=255).step_by(2).map(|i| vec![i; 32]).collect();
        b.delete_mutation_macs("regular_high", &evens)
            .await
            .unwrap();
        let left = b
            .get_mutation_macs("regular_high", &all)
            .await
            .unwrap()
            .len();
        (found.len(), left)
    }
    assert_eq!(differential!(scenario), (256, 128));
}
