use wacore::store::traits::{
    Backend, DeviceInfo, DeviceListRecord, LidPnMappingEntry, PendingInboundKey, PendingInboundRow,
    ProtocolStore, TcTokenEntry,
};

use super::{backend, differential, run};

const GROUP: &str = "120363000000000001@g.us";
const OTHER_GROUP: &str = "120363000000000002@g.us";

#[test]
fn sender_key_devices_set_clear_and_delete_rows() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Vec<(String, bool)>> {
        let mut seen = Vec::new();
        macro_rules! look {
            ($g:expr) => {{
                let mut devices = b.get_sender_key_devices($g).await.unwrap();
                devices.sort();
                seen.push(devices);
            }};
        }
        look!(GROUP);
        b.set_sender_key_status(GROUP, &[("a:1@lid", true), ("b:2@lid", false)])
            .await
            .unwrap();
        b.set_sender_key_status(GROUP, &[("b:2@lid", true), ("c:3@lid", false)])
            .await
            .unwrap();
        b.set_sender_key_status(OTHER_GROUP, &[("a:1@lid", true), ("d:4@lid", true)])
            .await
            .unwrap();
        look!(GROUP);
        b.delete_sender_key_device_rows(&["a:1@lid"]).await.unwrap();
        look!(GROUP);
        look!(OTHER_GROUP);
        b.clear_sender_key_devices(GROUP).await.unwrap();
        look!(GROUP);
        look!(OTHER_GROUP);
        b.clear_all_sender_key_devices().await.unwrap();
        look!(OTHER_GROUP);
        seen
    }
    let d = |jid: &str, has: bool| (jid.to_string(), has);
    assert_eq!(
        differential!(scenario),
        vec![
            vec![],
            vec![d("a:1@lid", true), d("b:2@lid", true), d("c:3@lid", false)],
            vec![d("b:2@lid", true), d("c:3@lid", false)],
            vec![d("d:4@lid", true)],
            vec![],
            vec![d("d:4@lid", true)],
            vec![],
        ]
    );
}

fn mapping(lid: &str, phone: &str, at: i64, source: &str) -> LidPnMappingEntry {
    LidPnMappingEntry {
        lid: lid.into(),
        phone_number: phone.into(),
        created_at: at,
        updated_at: at + 1,
        learning_source: source.into(),
    }
}

type Mapping = (String, String, i64, i64, String);

fn m(e: LidPnMappingEntry) -> Mapping {
    (
        e.lid,
        e.phone_number,
        e.created_at,
        e.updated_at,
        e.learning_source,
    )
}

#[test]
fn lid_mappings_both_ways_overwrite_and_list() {
    async fn scenario<B: Backend>(b: &B) -> (Vec<Option<Mapping>>, Vec<Mapping>) {
        let mut seen = vec![
            b.get_lid_mapping("100").await.unwrap().map(m),
            b.get_pn_mapping("555").await.unwrap().map(m),
        ];
        b.put_lid_mapping(&mapping("100", "555", 10, "usync"))
            .await
            .unwrap();
        b.put_lid_mappings(&[
            mapping("200", "666", 20, "peer_pn_message"),
            mapping("300", "777", 30, "usync"),
        ])
        .await
        .unwrap();
        seen.push(b.get_lid_mapping("100").await.unwrap().map(m));
        seen.push(b.get_pn_mapping("666").await.unwrap().map(m));
        // The LID moves to another number: the old number no longer maps.
        b.put_lid_mapping(&mapping("100", "556", 40, "pn_lid_migration"))
            .await
            .unwrap();
        seen.push(b.get_lid_mapping("100").await.unwrap().map(m));
        seen.push(b.get_pn_mapping("555").await.unwrap().map(m));
        seen.push(b.get_pn_mapping("556").await.unwrap().map(m));
        let mut all: Vec<Mapping> = b
            .get_all_lid_mappings()
            .await
            .unwrap()
            .into_iter()
            .map(m)
            .collect();
        all.sort();
        (seen, all)
    }
    let (seen, all) = differential!(scenario);
    assert_eq!(
        seen,
        vec![
            None,
            None,
            Some(m(mapping("100", "555", 10, "usync"))),
            Some(m(mapping("200", "666", 20, "peer_pn_message"))),
            Some(m(mapping("100", "556", 40, "pn_lid_migration"))),
            None,
            Some(m(mapping("100", "556", 40, "pn_lid_migration"))),
        ]
    );
    assert_eq!(
        all,
        vec![
            m(mapping("100", "556", 40, "pn_lid_migration")),
            m(mapping("200", "666", 20, "peer_pn_message")),
            m(mapping("300", "777", 30, "usync")),
        ]
    );
}

/// Two LIDs for one number: the phone maps to the one updated last, in
/// whichever order they were stored.
#[test]
fn pn_mapping_is_the_most_recently_updated_lid() {
    let b = backend();
    run(async {
        b.put_lid_mapping(&mapping("new", "555", 50, "usync"))
            .await
            .unwrap();
        b.put_lid_mapping(&mapping("old", "555", 10, "usync"))
            .await
            .unwrap();
        assert_eq!(
            b.get_pn_mapping("555").await.unwrap().map(m),
            Some(m(mapping("new", "555", 50, "usync")))
        );
    });
}

#[test]
fn base_keys_compare_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<bool> {
        let mut seen = vec![b.has_same_base_key("a", "m1", b"k").await.unwrap()];
        b.save_base_key("a", "m1", b"k").await.unwrap();
        seen.push(b.has_same_base_key("a", "m1", b"k").await.unwrap());
        seen.push(b.has_same_base_key("a", "m1", b"other").await.unwrap());
        seen.push(b.has_same_base_key("a", "m2", b"k").await.unwrap());
        b.save_base_key("a", "m1", b"k2").await.unwrap();
        seen.push(b.has_same_base_key("a", "m1", b"k").await.unwrap());
        seen.push(b.has_same_base_key("a", "m1", b"k2").await.unwrap());
        b.delete_base_key("a", "m1").await.unwrap();
        seen.push(b.has_same_base_key("a", "m1", b"k2").await.unwrap());
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![false, true, false, false, false, true, false]
    );
}

type Devices = (
    String,
    Vec<(u32, Option<u32>, bool)>,
    i64,
    Option<String>,
    Option<u32>,
);

fn devices(r: DeviceListRecord) -> Devices {
    let list = r
        .devices
        .iter()
        .map(|d| (d.device_id, d.key_index, d.is_hosted))
        .collect();
    (r.user, list, r.timestamp, r.phash, r.raw_id)
}

fn record(user: &str, timestamp: i64, raw_id: Option<u32>) -> DeviceListRecord {
    DeviceListRecord {
        user: user.into(),
        devices: vec![
            DeviceInfo::new(0, None),
            DeviceInfo::new(7, Some(3)).with_hosting(true),
        ],
        timestamp,
        phash: raw_id.map(|id| format!("2:{id}")),
        raw_id,
    }
}

#[test]
fn device_lists_round_trip_batch_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Option<Devices>> {
        let mut seen = vec![b.get_devices("555").await.unwrap().map(devices)];
        b.update_device_list(record("555", 1, None)).await.unwrap();
        seen.push(b.get_devices("555").await.unwrap().map(devices));
        b.update_device_lists(vec![
            record("555", 2, Some(u32::MAX)),
            record("100", 3, Some(9)),
        ])
        .await
        .unwrap();
        seen.push(b.get_devices("555").await.unwrap().map(devices));
        seen.push(b.get_devices("100").await.unwrap().map(devices));
        b.delete_devices("555").await.unwrap();
        seen.push(b.get_devices("555").await.unwrap().map(devices));
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![
            None,
            Some(devices(record("555", 1, None))),
            Some(devices(record("555", 2, Some(u32::MAX)))),
            Some(devices(record("100", 3, Some(9)))),
            None,
        ]
    );
}

#[test]
fn group_metadata_round_trip_overwrite_and_delete() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Option<Vec<u8>>> {
        let mut seen = vec![b.get_group_metadata(GROUP).await.unwrap()];
        b.put_group_metadata(GROUP, b"v1").await.unwrap();
        seen.push(b.get_group_metadata(GROUP).await.unwrap());
        b.put_group_metadata(GROUP, b"v2").await.unwrap();
        seen.push(b.get_group_metadata(GROUP).await.unwrap());
        b.delete_group_metadata(GROUP).await.unwrap();
        seen.push(b.get_group_metadata(GROUP).await.unwrap());
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![None, Some(b"v1".to_vec()), Some(b"v2".to_vec()), None]
    );
}

type Token = (Vec<u8>, i64, Option<i64>);

fn t(e: TcTokenEntry) -> Token {
    (e.token, e.token_timestamp, e.sender_timestamp)
}

#[test]
fn tc_token_lifecycle() {
    async fn scenario<B: Backend>(
        b: &B,
    ) -> (Vec<Option<Token>>, Vec<String>, Vec<u32>, Vec<String>) {
        let mut seen = vec![b.get_tc_token("a@lid").await.unwrap().map(t)];
        // The sender bucket first: a byte-less placeholder.
        b.touch_tc_token_sender_timestamp("a@lid", 100)
            .await
            .unwrap();
        seen.push(b.get_tc_token("a@lid").await.unwrap().map(t));
        // A real token replaces the placeholder whatever its age, keeping the bucket.
        b.store_received_tc_token("a@lid", b"tok1", 50)
            .await
            .unwrap();
        seen.push(b.get_tc_token("a@lid").await.unwrap().map(t));
        // An older token does not clobber it; a newer (or as new) one does.
        b.store_received_tc_token("a@lid", b"stale", 40)
            .await
            .unwrap();
        seen.push(b.get_tc_token("a@lid").await.unwrap().map(t));
        b.store_received_tc_token("a@lid", b"tok2", 50)
            .await
            .unwrap();
        seen.push(b.get_tc_token("a@lid").await.unwrap().map(t));
        // The bucket only moves forward.
        b.touch_tc_token_sender_timestamp("a@lid", 90)
            .await
            .unwrap();
        b.touch_tc_token_sender_timestamp("a@lid", 120)
            .await
            .unwrap();
        seen.push(b.get_tc_token("a@lid").await.unwrap().map(t));
        // A token without a bucket, then put overwrites everything.
        b.store_received_tc_token("b@lid", b"tokb", 200)
            .await
            .unwrap();
        seen.push(b.get_tc_token("b@lid").await.unwrap().map(t));
        b.put_tc_token(
            "c@lid",
            &TcTokenEntry {
                token: b"tokc".to_vec(),
                token_timestamp: 10,
                sender_timestamp: Some(11),
            },
        )
        .await
        .unwrap();
        b.put_tc_token(
            "c@lid",
            &TcTokenEntry {
                token: b"tokc2".to_vec(),
                token_timestamp: 12,
                sender_timestamp: None,
            },
        )
        .await
        .unwrap();
        seen.push(b.get_tc_token("c@lid").await.unwrap().map(t));
        let mut jids = b.get_all_tc_token_jids().await.unwrap();
        jids.sort();
        // a: token 50, bucket 120; b: token 200, no bucket; c: token 12, no bucket.
        let counts = vec![
            b.delete_expired_tc_tokens(10, 10).await.unwrap(), // all live
            b.delete_expired_tc_tokens(60, 100).await.unwrap(), // a kept by its bucket; c goes
            b.delete_expired_tc_tokens(60, 130).await.unwrap(), // a goes
            b.delete_expired_tc_tokens(300, 300).await.unwrap(), // b goes
        ];
        b.touch_tc_token_sender_timestamp("d@lid", 5).await.unwrap();
        b.delete_tc_token("d@lid").await.unwrap();
        seen.push(b.get_tc_token("d@lid").await.unwrap().map(t));
        (seen, jids, counts, b.get_all_tc_token_jids().await.unwrap())
    }
    let (seen, jids, counts, left) = differential!(scenario);
    assert_eq!(
        seen,
        vec![
            None,
            Some((vec![], 100, Some(100))),
            Some((b"tok1".to_vec(), 50, Some(100))),
            Some((b"tok1".to_vec(), 50, Some(100))),
            Some((b"tok2".to_vec(), 50, Some(100))),
            Some((b"tok2".to_vec(), 50, Some(120))),
            Some((b"tokb".to_vec(), 200, None)),
            Some((b"tokc2".to_vec(), 12, None)),
            None,
        ]
    );
    assert_eq!(jids, vec!["a@lid", "b@lid", "c@lid"]);
    assert_eq!(counts, vec![0, 1, 1, 1]);
    assert_eq!(left, Vec::<String>::new());
}

/// A placeholder (no token bytes) is expired on the token side whatever its
/// timestamp.
#[test]
fn tc_token_placeholder_expires_by_its_bucket_only() {
    async fn scenario<B: Backend>(b: &B) -> Vec<u32> {
        b.touch_tc_token_sender_timestamp("p@lid", 100)
            .await
            .unwrap();
        vec![
            b.delete_expired_tc_tokens(0, 100).await.unwrap(),
            b.delete_expired_tc_tokens(0, 101).await.unwrap(),
        ]
    }
    assert_eq!(differential!(scenario), vec![0, 1]);
}

#[test]
fn sent_messages_are_taken_once_and_expire() {
    async fn scenario<B: Backend>(b: &B) -> (Vec<Option<Vec<u8>>>, Vec<u32>) {
        let chat = "555@s.whatsapp.net";
        b.store_sent_message(chat, "m1", b"p1").await.unwrap();
        b.store_sent_message(chat, "m1", b"p1 again").await.unwrap();
        b.store_sent_message(chat, "m2", b"p2").await.unwrap();
        b.store_sent_message("other@g.us", "m1", b"p3")
            .await
            .unwrap();
        let taken = vec![
            b.take_sent_message(chat, "m1").await.unwrap(),
            b.take_sent_message(chat, "m1").await.unwrap(),
            b.take_sent_message(chat, "missing").await.unwrap(),
        ];
        let now = wacore::time::now_secs();
        let counts = vec![
            b.delete_expired_sent_messages(now - 60).await.unwrap(),
            b.delete_expired_sent_messages(now + 60).await.unwrap(),
        ];
        let mut after = taken;
        after.push(b.take_sent_message(chat, "m2").await.unwrap());
        (after, counts)
    }
    assert_eq!(
        differential!(scenario),
        (
            vec![Some(b"p1 again".to_vec()), None, None, None],
            vec![0, 2]
        )
    );
}

#[test]
fn pending_inbound_round_trip_batches_and_expiry() {
    async fn scenario<B: Backend>(b: &B) -> (Vec<Option<Vec<u8>>>, Vec<u32>) {
        let (chat, alice, bob) = (GROUP, "a@lid", "b@lid");
        let mut seen = vec![b.get_pending_inbound(chat, alice, "1").await.unwrap()];
        b.store_pending_inbound(chat, alice, "1", b"one")
            .await
            .unwrap();
        b.store_pending_inbound_batch(&[
            PendingInboundRow {
                chat,
                sender: alice,
                id: "1",
                message: b"one again",
            },
            PendingInboundRow {
                chat,
                sender: bob,
                id: "1",
                message: b"bob",
            },
            PendingInboundRow {
                chat,
                sender: alice,
                id: "2",
                message: b"two",
            },
        ])
        .await
        .unwrap();
        seen.push(b.get_pending_inbound(chat, alice, "1").await.unwrap());
        seen.push(b.get_pending_inbound(chat, bob, "1").await.unwrap());
        b.delete_pending_inbound(chat, alice, "1").await.unwrap();
        b.delete_pending_inbound_batch(&[
            PendingInboundKey {
                chat,
                sender: bob,
                id: "1",
            },
            PendingInboundKey {
                chat,
                sender: bob,
                id: "missing",
            },
        ])
        .await
        .unwrap();
        seen.push(b.get_pending_inbound(chat, alice, "1").await.unwrap());
        seen.push(b.get_pending_inbound(chat, bob, "1").await.unwrap());
        seen.push(b.get_pending_inbound(chat, alice, "2").await.unwrap());
        let now = wacore::time::now_secs();
        let counts = vec![
            b.delete_expired_pending_inbound(now - 60).await.unwrap(),
            b.delete_expired_pending_inbound(now + 60).await.unwrap(),
        ];
        seen.push(b.get_pending_inbound(chat, alice, "2").await.unwrap());
        (seen, counts)
    }
    assert_eq!(
        differential!(scenario),
        (
            vec![
                None,
                Some(b"one again".to_vec()),
                Some(b"bob".to_vec()),
                None,
                None,
                Some(b"two".to_vec()),
                None,
            ],
            vec![0, 1],
        )
    );
}
