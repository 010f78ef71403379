//! A request body as the fake reads it: each object's fields kept as the
//! slices of JSON received (`RawValue`), read only where a check or the
//! answer needs them. A `serde_json::Value` of a 60 KB history took the
//! double 0.4 ms to build, in the very turn it answers, which a bench then
//! counted as the gateway's; this reads the same body in a third of that.
//! The recorded `Value` is built only when a test asks for it.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A request's body: its fields, and its messages read once for every
/// check that walks them.
#[derive(Debug, Default)]
pub(crate) struct Body<'a> {
    pub fields: Fields<'a>,
    /// `messages`; `None` when it is missing or not an array.
    pub messages: Option<Vec<Message<'a>>>,
}

impl<'a> Body<'a> {
    /// The body received; an error when it is not JSON.
    pub fn parse(raw: &'a [u8]) -> Result<Self, serde_json::Error> {
        let fields: Fields = serde_json::from_slice(raw)?;
        let messages = fields
            .get("messages")
            .filter(|m| m.get().starts_with('['))
            .and_then(|m| serde_json::from_str(m.get()).ok());
        Ok(Body { fields, messages })
    }
}

/// Tests: `value` written as JSON, then read as the fake reads a body.
#[cfg(test)]
pub(crate) fn on<T>(value: &serde_json::Value, read: impl FnOnce(&Body) -> T) -> T {
    let raw = serde_json::to_vec(value).expect("a Value writes as JSON");
    read(&Body::parse(&raw).expect("written JSON reads back"))
}

/// A message's fields that the checks read (the others are skipped, not
/// kept: a history has a thousand of them). Anything but an object has
/// none.
#[derive(Debug, Default)]
pub(crate) struct Message<'a> {
    role: Option<&'a RawValue>,
    content: Option<&'a RawValue>,
    tool_calls: Option<&'a RawValue>,
    tool_call_id: Option<&'a RawValue>,
}

impl<'a> Message<'a> {
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        match key {
            "role" => self.role,
            "content" => self.content,
            "tool_calls" => self.tool_calls,
            "tool_call_id" => self.tool_call_id,
            _ => None,
        }
    }

    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(string)
    }

    pub fn list(&self, key: &str) -> Option<Vec<Fields<'a>>> {
        self.get(key).and_then(list)
    }
}

/// An object's fields, in order. Anything but an object has none, as
/// `Value::get` finds nothing in it.
#[derive(Debug, Default)]
pub(crate) struct Fields<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Fields<'a> {
    /// The field `key`; the last one when a key repeats, as serde_json's
    /// map keeps the last.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The string at `key`.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(string)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| &**k)
    }

    /// The object at `key` (no fields when it is not one).
    pub fn object(&self, key: &str) -> Fields<'a> {
        self.get(key).map(object).unwrap_or_default()
    }
}

/// A JSON string's text (unescaped; borrowed when it has no escapes).
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    serde_json::from_str::<Cow<str>>(text).ok()
}

pub(crate) fn is_string(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| r.get().starts_with('"'))
}

pub(crate) fn is_true(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| r.get() == "true")
}

/// A non-negative integer, as `Value::as_u64` reads one.
pub(crate) fn u64_of(raw: Option<&RawValue>) -> Option<u64> {
    raw.and_then(|r| serde_json::from_str::<u64>(r.get()).ok())
}

pub(crate) fn object(raw: &RawValue) -> Fields<'_> {
    serde_json::from_str(raw.get()).unwrap_or_default()
}

/// An array's items as objects; `None` when it is not an array.
pub(crate) fn list(raw: &RawValue) -> Option<Vec<Fields<'_>>> {
    let text = raw.get();
    if !text.starts_with('[') {
        return None;
    }
    serde_json::from_str::<Vec<Fields>>(text).ok()
}

/// The characters of a JSON text.
pub(crate) fn chars(raw: &RawValue) -> usize {
    raw.get().chars().count()
}

/// A visitor's methods for anything but an object: it has no fields, as
/// `Value::get` finds nothing in it (an array is read through).
macro_rules! none_unless_an_object {
    ($de:lifetime, $t:ty) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<$t, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(<$t>::default())
        }
        fn visit_unit<E>(self) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
            Ok(<$t>::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<$t, E> {
            Ok(<$t>::default())
        }
    };
}

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut fields = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            fields.push((key, map.next_value::<&RawValue>()?));
        }
        Ok(Fields(fields))
    }

    none_unless_an_object!('de, Fields<'de>);
}

impl<'de> Deserialize<'de> for Message<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MessageVisitor;
        impl<'de> Visitor<'de> for MessageVisitor {
            type Value = Message<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message<'de>, A::Error> {
                let mut m = Message::default();
                while let Some(Key(key)) = map.next_key()? {
                    let slot = match &*key {
                        "role" => &mut m.role,
                        "content" => &mut m.content,
                        "tool_calls" => &mut m.tool_calls,
                        "tool_call_id" => &mut m.tool_call_id,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(m)
            }
            none_unless_an_object!('de, Message<'de>);
        }
        d.deserialize_any(MessageVisitor)
    }
}

/// An object's key, borrowed unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_as_a_value_would() {
        let body = br#"{"model":"m","stream":true,"n":3,"f":1.5,"s":"a\"b","model":"last",
            "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},7,"x"],"o":{"k":[]}}"#;
        let body = Body::parse(body).unwrap();
        let (f, messages) = (&body.fields, body.messages.as_ref().unwrap());
        let first_blocks = messages[0].list("content").unwrap();
        assert_eq!(
            (
                f.str("model").as_deref(),
                is_true(f.get("stream")),
                u64_of(f.get("n")),
                u64_of(f.get("f")),
                f.str("s").as_deref(),
                f.str("n"),
                is_string(f.get("model")),
                is_string(f.get("n")),
            ),
            (
                Some("last"),
                true,
                Some(3),
                None,
                Some("a\"b"),
                None,
                true,
                false
            )
        );
        assert_eq!(
            (
                messages.len(),
                messages[0].str("role").as_deref(),
                first_blocks[0].str("text").as_deref(),
                messages[1].get("role").is_none(),
                f.object("o").get("k").and_then(list).map(|l| l.len()),
                f.get("o").and_then(list).is_none(),
            ),
            (3, Some("user"), Some("hi"), true, Some(0), true)
        );
    }

    #[test]
    fn not_an_object_has_no_fields_and_not_json_fails() {
        let none = |raw: &[u8]| {
            let body = Body::parse(raw).unwrap();
            (body.fields.0.len(), body.messages.is_none())
        };
        assert_eq!((none(b"[1,2]"), none(b"\"s\"")), ((0, true), (0, true)));
        assert!(Body::parse(b"{\"a\":").is_err());
    }
}
