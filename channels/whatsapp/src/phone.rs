//! WhatsApp ids and phone numbers. A user's `wa_id` is their number in
//! digits (`16505551234`); the gateway compares senders as E.164
//! (`+16505551234`) so `allowFrom`, pairing and identity links written
//! with phone numbers match.

/// `16505551234` → `+16505551234`. An id that is not a phone number
/// (WhatsApp may give user ids that are not) is kept as it is.
pub fn to_e164(wa_id: &str) -> String {
    let id = wa_id.trim();
    let digits = id.strip_prefix('+').unwrap_or(id);
    if (7..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{digits}")
    } else {
        id.to_string()
    }
}

/// A peer id as the Cloud API's `to` takes it: a number written any way
/// (`+1 (650) 555-1234`) in digits, anything else as it is.
pub fn to_wa_id(peer_id: &str) -> String {
    let id = peer_id.trim();
    let looks_like_number = id
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | ' ' | '-' | '(' | ')' | '.'));
    let digits: String = id.chars().filter(char::is_ascii_digit).collect();
    if looks_like_number && !digits.is_empty() {
        digits
    } else {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wa_ids_become_e164() {
        assert_eq!(to_e164("16505551234"), "+16505551234");
        assert_eq!(to_e164(" +447700900123 "), "+447700900123");
        // Not a number: kept.
        assert_eq!(
            to_e164("US.13491208655302741918"),
            "US.13491208655302741918"
        );
        assert_eq!(to_e164("123"), "123");
        assert_eq!(to_e164("1234567890123456"), "1234567890123456");
    }

    #[test]
    fn peers_become_wa_ids() {
        assert_eq!(to_wa_id("+16505551234"), "16505551234");
        assert_eq!(to_wa_id("+1 (650) 555-1234"), "16505551234");
        assert_eq!(to_wa_id("16505551234"), "16505551234");
        assert_eq!(to_wa_id("US.1349"), "US.1349");
    }
}
