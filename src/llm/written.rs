//! A conversation's messages as a provider writes them, kept between model
//! calls. Between compactions a history only grows, so a call need write
//! only what was added since the last one: the messages before the last
//! assistant message are written once (`transcript::stable_end` says why
//! they stay the same) and copied into every later body as they are.

use super::transcript::stable_end;
use super::Provider;
use gsv_protocol::Message;
use serde_json::value::RawValue;

/// The first messages of a request already written: `elements` are the
/// body's entries for `messages[..messages]`, in order.
#[derive(Debug, Clone, Copy)]
pub struct WrittenPrefix<'a> {
    pub messages: usize,
    pub elements: &'a [Box<RawValue>],
}

impl PartialEq for WrittenPrefix<'_> {
    fn eq(&self, other: &Self) -> bool {
        let texts = |w: &Self| w.elements.iter().map(|e| e.get()).collect::<Vec<_>>();
        self.messages == other.messages && texts(self) == texts(other)
    }
}

/// What was written of one history for one API.
#[derive(Debug, Default)]
pub struct WrittenHistory {
    api: &'static str,
    /// The history's generation: it changes whenever the history is
    /// rewritten rather than appended to (compaction, a reset, a transcript
    /// written into a message).
    generation: u64,
    /// How many of its messages `elements` are written from.
    upto: usize,
    elements: Vec<Box<RawValue>>,
}

impl WrittenHistory {
    /// `messages` (of `generation`) written up to their stable end, writing
    /// only what was not written already; for `LlmRequest::written`.
    pub fn update(
        &mut self,
        provider: &dyn Provider,
        generation: u64,
        messages: &[Message],
    ) -> WrittenPrefix<'_> {
        let api = provider.api();
        if (self.api, self.generation) != (api, generation) || self.upto > messages.len() {
            *self = Self {
                api,
                generation,
                ..Self::default()
            };
        }
        let end = stable_end(messages);
        if end > self.upto {
            let written = provider.write_messages(&messages[self.upto..end]);
            self.elements.extend(written);
            self.upto = end;
        }
        WrittenPrefix {
            messages: self.upto,
            elements: &self.elements,
        }
    }
}

/// Serializes the written entries as they are, then `fresh`'s: the
/// `messages` array of a body (each provider's body writes its own
/// leading entries first, if any).
pub(crate) fn write_entries<S, T>(
    seq: &mut S,
    written: Option<WrittenPrefix>,
    fresh: &[T],
) -> Result<(), S::Error>
where
    S: serde::ser::SerializeSeq,
    T: serde::Serialize,
{
    for element in written.map_or(&[][..], |w| w.elements) {
        seq.serialize_element(&**element)?;
    }
    for entry in fresh {
        seq.serialize_element(entry)?;
    }
    Ok(())
}

/// Where the messages still to write begin.
pub(crate) fn unwritten<'a>(
    messages: &'a [Message],
    written: Option<WrittenPrefix>,
) -> &'a [Message] {
    &messages[written.map_or(0, |w| w.messages.min(messages.len()))..]
}

#[cfg(test)]
#[path = "written_tests.rs"]
mod tests;
