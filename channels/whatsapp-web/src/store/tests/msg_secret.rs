use std::sync::Arc;

use wacore::store::traits::{Backend, MsgSecretEntry};

use super::differential;

fn entry(msg_id: &str, secret: u8, expires_at: i64, message_ts: i64) -> MsgSecretEntry {
    MsgSecretEntry {
        chat: Arc::from("555@s.whatsapp.net"),
        sender: Arc::from("555@s.whatsapp.net"),
        msg_id: Arc::from(msg_id),
        secret: [secret; 32],
        expires_at,
        message_ts,
    }
}

const CHAT: &str = "555@s.whatsapp.net";

#[test]
fn msg_secrets_round_trip_keyed_by_all_three() {
    async fn scenario<B: Backend>(b: &B) -> Vec<Option<(Vec<u8>, i64)>> {
        let mut seen = vec![b.get_msg_secret_with_ts(CHAT, CHAT, "m").await.unwrap()];
        b.put_msg_secret(CHAT, CHAT, "m", &[1; 32]).await.unwrap();
        b.put_msg_secret(CHAT, "me@s.whatsapp.net", "m", &[2; 32])
            .await
            .unwrap();
        b.put_msg_secret("other@g.us", CHAT, "m", &[3; 32])
            .await
            .unwrap();
        seen.push(b.get_msg_secret_with_ts(CHAT, CHAT, "m").await.unwrap());
        seen.push(
            b.get_msg_secret_with_ts(CHAT, "me@s.whatsapp.net", "m")
                .await
                .unwrap(),
        );
        seen.push(
            b.get_msg_secret_with_ts("other@g.us", CHAT, "m")
                .await
                .unwrap(),
        );
        seen.push(
            b.get_msg_secret(CHAT, CHAT, "m")
                .await
                .unwrap()
                .map(|s| (s, -1)),
        );
        seen.push(
            b.get_msg_secret(CHAT, CHAT, "n")
                .await
                .unwrap()
                .map(|s| (s, -1)),
        );
        seen
    }
    assert_eq!(
        differential!(scenario),
        vec![
            None,
            Some((vec![1; 32], 0)),
            Some((vec![2; 32], 0)),
            Some((vec![3; 32], 0)),
            Some((vec![1; 32], -1)),
            None,
        ]
    );
}

/// On a key already stored: the new secret, the later deadline (`0`, never,
/// wins), the later known parent time; also within one batch.
#[test]
fn msg_secret_upserts_merge_deadlines_and_times() {
    async fn scenario<B: Backend>(
        b: &B,
    ) -> (Vec<usize>, Vec<Option<(Vec<u8>, i64)>>, Vec<u32>, Vec<bool>) {
        let stored = vec![
            b.put_msg_secrets(vec![
                entry("later", 1, 100, 10),
                entry("never", 1, 100, 0),
                entry("keep", 1, 0, 10),
                entry("short", 1, 100, 10),
            ])
            .await
            .unwrap(),
            b.put_msg_secrets(vec![
                entry("later", 2, 200, 0), // later deadline; ts 0 keeps 10
                entry("never", 2, 0, 5),   // 0 wins
                entry("keep", 2, 50, 20),  // stays never; ts 20
                entry("short", 2, 50, 5),  // deadline stays 100
                entry("short", 3, 60, 30), // same batch again: 100 still, ts 30
            ])
            .await
            .unwrap(),
        ];
        let ids = ["later", "never", "keep", "short"];
        let mut secrets = Vec::new();
        for id in ids {
            secrets.push(b.get_msg_secret_with_ts(CHAT, CHAT, id).await.unwrap());
        }
        let counts = vec![
            b.delete_expired_msg_secrets(99).await.unwrap(),
            b.delete_expired_msg_secrets(100).await.unwrap(), // short (at its deadline)
            b.delete_expired_msg_secrets(i64::MAX).await.unwrap(), // later; never and keep stay
        ];
        let mut left = Vec::new();
        for id in ids {
            left.push(b.get_msg_secret(CHAT, CHAT, id).await.unwrap().is_some());
        }
        (stored, secrets, counts, left)
    }
    assert_eq!(
        differential!(scenario),
        (
            vec![4, 5],
            vec![
                Some((vec![2; 32], 10)),
                Some((vec![2; 32], 5)),
                Some((vec![2; 32], 20)),
                Some((vec![3; 32], 30)),
            ],
            vec![0, 1, 1],
            vec![false, true, true, false],
        )
    );
}

/// A history sync's batch: more rows than one statement binds.
#[test]
fn msg_secret_batches_larger_than_one_statement() {
    async fn scenario<B: Backend>(b: &B) -> (usize, Vec<Option<Vec<u8>>>, u32) {
        let entries: Vec<MsgSecretEntry> = (0..250)
            .map(|i| entry(&format!("m{i}"), i as u8, 1000 + i, i))
            .collect();
        let stored = b.put_msg_secrets(entries).await.unwrap();
        let sample = vec![
            b.get_msg_secret(CHAT, CHAT, "m0").await.unwrap(),
            b.get_msg_secret(CHAT, CHAT, "m249").await.unwrap(),
        ];
        (
            stored,
            sample,
            b.delete_expired_msg_secrets(1099).await.unwrap(),
        )
    }
    assert_eq!(
        differential!(scenario),
        (250, vec![Some(vec![0; 32]), Some(vec![249; 32])], 100)
    );
}
