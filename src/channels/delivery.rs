//! Delivering an answer to a chat app: the pieces it is split into, the
//! key each piece is recorded under (so a retry never sends a piece the
//! platform already has), and when a failed piece is tried again. The
//! gateway keeps a ledger row per piece; these are its decisions.

use super::chunk::split_message;
use gsv_protocol::channels::DeliveryState;

/// One piece of an answer on its way to a peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The run (or `gsv__Message` call) the text belongs to.
    pub source_id: String,
    /// Its position, from 0.
    pub index: u32,
    pub text: String,
    /// The message it answers: the first piece only, so a long answer
    /// reads as one reply.
    pub reply_to: Option<String>,
}

impl Piece {
    /// The ledger key, also sent to the platform as its idempotency nonce
    /// where it has one (Discord: at most 25 characters).
    pub fn key(&self) -> String {
        delivery_key(&self.source_id, self.index)
    }
}

/// Splits `text` for a platform that takes `limit` characters per message.
pub fn pieces(source_id: &str, text: &str, limit: usize, reply_to: Option<&str>) -> Vec<Piece> {
    split_message(text, limit)
        .into_iter()
        .enumerate()
        .map(|(i, text)| Piece {
            source_id: source_id.to_string(),
            index: i as u32,
            text,
            reply_to: if i == 0 {
                reply_to.map(str::to_string)
            } else {
                None
            },
        })
        .collect()
}

/// A short stable key for piece `index` of `source_id`: 16 hex digits of
/// FNV-1a over both, then the index (`4f2a…c1-3`), 25 characters at most.
pub fn delivery_key(source_id: &str, index: u32) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in source_id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}-{index}")
}

/// Attempts of one piece before it is reported as failed.
pub const MAX_ATTEMPTS: u32 = 5;

/// When a piece whose `attempts`-th send failed (retryably) is tried again:
/// 2 s, 4 s, 8 s, 16 s, or the platform's own `retry_after` when it gave
/// one and it is longer; `None` once `MAX_ATTEMPTS` are spent.
pub fn retry_at(now_ms: i64, attempts: u32, retry_after_ms: Option<i64>) -> Option<i64> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let backoff = 1_000i64 << attempts.min(20);
    Some(now_ms + backoff.max(retry_after_ms.unwrap_or(0)))
}

/// How often typing is renewed while a run goes on: chat apps show it
/// for a while only (Discord: 10 s).
pub const TYPING_RENEW_MS: i64 = 8_000;
/// A run that never ends does not keep the indicator on forever.
pub const TYPING_MAX_MS: i64 = 10 * 60_000;

/// What a platform's delivery receipt does to a piece it had accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptChange {
    /// Nothing new: a repeated or older receipt, or `sent` (the ledger
    /// marked the piece sent when the platform took it).
    Nothing,
    /// The person's device has it (or the person read it): recorded, and
    /// a piece reported failed before was delivered after all.
    Receipt(DeliveryState),
    /// The platform gave up on it after accepting it: failed, for this reason.
    Failed(String),
}

/// The change a receipt `incoming` makes to a piece whose ledger status
/// is `status` (`sent`, `failed`) with the best receipt so far `receipt`.
/// Receipts only move forward; a `failed` after a delivery (WhatsApp sends
/// one when another of the person's devices missed it) does not undo it.
pub fn receipt_change(
    status: &str,
    receipt: Option<DeliveryState>,
    incoming: DeliveryState,
    error: Option<&str>,
) -> ReceiptChange {
    let delivered = receipt.is_some_and(|r| r >= DeliveryState::Delivered);
    match incoming {
        DeliveryState::Sent => ReceiptChange::Nothing,
        DeliveryState::Delivered | DeliveryState::Read => {
            if receipt.is_some_and(|r| r >= incoming && r != DeliveryState::Failed) {
                ReceiptChange::Nothing
            } else {
                ReceiptChange::Receipt(incoming)
            }
        }
        DeliveryState::Failed if delivered || status == "failed" => ReceiptChange::Nothing,
        DeliveryState::Failed => ReceiptChange::Failed(
            error
                .filter(|e| !e.trim().is_empty())
                .unwrap_or("the platform accepted the message but could not deliver it")
                .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_move_forward_only() {
        use DeliveryState::*;
        assert_eq!(
            receipt_change("sent", None, Sent, None),
            ReceiptChange::Nothing
        );
        assert_eq!(
            receipt_change("sent", None, Delivered, None),
            ReceiptChange::Receipt(Delivered)
        );
        assert_eq!(
            receipt_change("sent", Some(Delivered), Read, None),
            ReceiptChange::Receipt(Read)
        );
        assert_eq!(
            receipt_change("sent", Some(Read), Delivered, None),
            ReceiptChange::Nothing
        );
        assert_eq!(
            receipt_change("sent", Some(Read), Read, None),
            ReceiptChange::Nothing
        );
        assert_eq!(
            receipt_change("sent", None, Failed, Some("window closed")),
            ReceiptChange::Failed("window closed".into())
        );
        assert_eq!(
            receipt_change("sent", None, Failed, None),
            ReceiptChange::Failed(
                "the platform accepted the message but could not deliver it".into()
            )
        );
        // Delivered is delivered, whatever another device said after.
        assert_eq!(
            receipt_change("sent", Some(Delivered), Failed, Some("x")),
            ReceiptChange::Nothing
        );
        assert_eq!(
            receipt_change("failed", None, Failed, Some("x")),
            ReceiptChange::Nothing
        );
        // A delivery after a failure: it arrived after all.
        assert_eq!(
            receipt_change("failed", None, Delivered, None),
            ReceiptChange::Receipt(Delivered)
        );
    }

    #[test]
    fn a_long_answer_is_a_reply_in_pieces() {
        let text = format!("{}\n\n{}", "a".repeat(80), "b".repeat(80));
        assert_eq!(
            pieces("run-1", &text, 100, Some("m-9")),
            [
                Piece {
                    source_id: "run-1".into(),
                    index: 0,
                    text: "a".repeat(80),
                    reply_to: Some("m-9".into()),
                },
                Piece {
                    source_id: "run-1".into(),
                    index: 1,
                    text: "b".repeat(80),
                    reply_to: None,
                },
            ]
        );
        assert!(pieces("run-1", " \n", 100, None).is_empty());
    }

    #[test]
    fn keys_are_stable_short_and_distinct() {
        let key = delivery_key("8d0c7f8e-2b5a-4a57-9a43-7a1c2b9d7e10", 12);
        assert_eq!(
            key,
            delivery_key("8d0c7f8e-2b5a-4a57-9a43-7a1c2b9d7e10", 12)
        );
        assert!(key.len() <= 25, "{key}");
        assert_ne!(
            key,
            delivery_key("8d0c7f8e-2b5a-4a57-9a43-7a1c2b9d7e11", 12)
        );
        assert_ne!(key, delivery_key("8d0c7f8e-2b5a-4a57-9a43-7a1c2b9d7e10", 1));
        assert_eq!(delivery_key("", 0), "cbf29ce484222325-0");
    }

    #[test]
    fn retries_back_off_and_give_up() {
        assert_eq!(retry_at(0, 1, None), Some(2_000));
        assert_eq!(retry_at(0, 2, None), Some(4_000));
        assert_eq!(retry_at(0, 4, None), Some(16_000));
        assert_eq!(retry_at(0, 1, Some(30_000)), Some(30_000));
        assert_eq!(retry_at(0, MAX_ATTEMPTS, None), None);
    }
}
