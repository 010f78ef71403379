//! When the Gateway's one alarm is set, given the earliest deadline of all
//! (`Gateway::next_deadline`), as pure decisions: the object's scheduler
//! (`worker/gateway_do/scheduler/deadlines.rs`) does the storage calls.

/// The soonest the alarm comes back when set during its own run.
pub const REARM_MS: i64 = 50;

/// What to do with the alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmChange {
    /// It is set to this already: no storage write.
    Keep,
    /// Set it to this time (ms since the epoch).
    Set(i64),
    /// Nothing is due ever: delete it.
    Delete,
}

/// The alarm for deadline `next` at `now`; `set` is what this instance
/// last set, `in_alarm` whether the alarm is running now. Inside the alarm
/// never "now" again: an alarm set during its own run to the very time it
/// ran at is taken by workerd for the one that ran and cleared when the
/// run ends, and a deadline left due must not make the alarm spin. The
/// same alarm again is a write for nothing, skipped outside the alarm's
/// own run (which consumes the alarm).
pub fn alarm_change(next: Option<f64>, now: i64, in_alarm: bool, set: Option<i64>) -> AlarmChange {
    let soonest = if in_alarm { now + REARM_MS } else { now };
    match next.map(|at| at.max(soonest as f64) as i64) {
        Some(at) if set == Some(at) && !in_alarm => AlarmChange::Keep,
        Some(at) => AlarmChange::Set(at),
        None => AlarmChange::Delete,
    }
}

/// A deadline at `at` was just added: whether the alarm must be set
/// again (it is not set at or before `at`, or it is running now).
pub fn moves_for(at: i64, in_alarm: bool, set: Option<i64>) -> bool {
    let earlier = set.is_some_and(|set| set <= at);
    !earlier || in_alarm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_past_deadline_sets_the_alarm_now_outside_the_alarm() {
        assert_eq!(
            alarm_change(Some(500.0), 1_000, false, None),
            AlarmChange::Set(1_000)
        );
    }

    #[test]
    fn inside_the_alarm_a_due_deadline_comes_back_later() {
        assert_eq!(
            alarm_change(Some(500.0), 1_000, true, None),
            AlarmChange::Set(1_000 + REARM_MS)
        );
    }

    #[test]
    fn the_same_alarm_is_kept_outside_the_alarm_only() {
        assert_eq!(
            alarm_change(Some(2_000.0), 1_000, false, Some(2_000)),
            AlarmChange::Keep
        );
        assert_eq!(
            alarm_change(Some(2_000.0), 1_000, true, Some(2_000)),
            AlarmChange::Set(2_000)
        );
    }

    #[test]
    fn nothing_due_deletes_the_alarm() {
        assert_eq!(
            alarm_change(None, 1_000, false, Some(2_000)),
            AlarmChange::Delete
        );
        assert_eq!(alarm_change(None, 1_000, false, None), AlarmChange::Delete);
    }

    #[test]
    fn a_new_deadline_moves_only_an_alarm_set_later_or_none() {
        assert!(!moves_for(3_000, false, Some(2_000)));
        assert!(!moves_for(2_000, false, Some(2_000)));
        assert!(moves_for(1_000, false, Some(2_000)));
        assert!(moves_for(1_000, false, None));
        assert!(moves_for(3_000, true, Some(2_000)));
    }
}
