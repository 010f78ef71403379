//! A piece whose send got no answer (the connection dropped, the Worker
//! stopped) may or may not have reached Meta, and the Cloud API takes no
//! idempotency key: sending it again blindly could show it twice. The
//! send carried the gateway's key for the piece as
//! `biz_opaque_callback_data`, which Meta echoes in the message's status
//! webhooks, so a receipt settles it. What a retry of such a piece does:

/// How long a receipt may take to name a send before it is presumed lost.
pub const RECEIPT_WAIT_MS: i64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostSend {
    /// A receipt may still come: try again later.
    Wait,
    /// None came, and receipts do name sends on this account: Meta never
    /// took it, so it is sent again.
    SendAgain,
    /// None came, but no receipt has named a send here lately (the
    /// webhook may not carry them): it cannot be known, and the piece is
    /// reported as possibly undelivered rather than risk a duplicate.
    GiveUp,
}

/// For a send begun `age` ms ago whose answer never came.
pub fn after_lost_answer(age: i64, receipts_name_sends: bool) -> LostSend {
    match (age < RECEIPT_WAIT_MS, receipts_name_sends) {
        (true, _) => LostSend::Wait,
        (false, true) => LostSend::SendAgain,
        (false, false) => LostSend::GiveUp,
    }
}

/// How much longer a send begun `age` ms ago may wait for its receipt.
pub fn receipt_wait_left(age: i64) -> i64 {
    (RECEIPT_WAIT_MS - age).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_send_waits_for_its_receipt_then_goes_again_only_when_receipts_name_sends() {
        let cases = [
            (0, true),
            (59_999, false),
            (60_000, true),
            (60_000, false),
            (3_600_000, true),
        ]
        .map(|(age, named)| after_lost_answer(age, named));
        assert_eq!(
            cases,
            [
                LostSend::Wait,
                LostSend::Wait,
                LostSend::SendAgain,
                LostSend::GiveUp,
                LostSend::SendAgain,
            ]
        );
    }

    #[test]
    fn the_retry_comes_when_the_wait_is_over() {
        assert_eq!(receipt_wait_left(0), 60_000);
        assert_eq!(receipt_wait_left(45_000), 15_000);
        assert_eq!(receipt_wait_left(90_000), 0);
        assert_eq!(
            after_lost_answer(receipt_wait_left(0), true),
            LostSend::SendAgain
        );
    }
}
