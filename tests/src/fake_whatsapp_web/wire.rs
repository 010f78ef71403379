//! Binary nodes (wacore-binary's format, WhatsApp's token dictionary): the
//! few helpers the double builds and reads stanzas with, and the JIDs it
//! addresses people by.

use std::fmt::Write as _;
use wacore_binary::{Jid, Node, NodeContent, NodeValue};

pub(crate) const SERVER: &str = "s.whatsapp.net";

/// `<tag a="v" …>children</tag>`.
pub(crate) fn node(tag: &str, attrs: &[(&str, NodeValue)], children: Vec<Node>) -> Node {
    let mut n = Node::new(tag.to_string(), Default::default(), None);
    for (k, v) in attrs {
        n.attrs.insert(k.to_string(), v.clone());
    }
    if !children.is_empty() {
        n.content = Some(NodeContent::Nodes(children));
    }
    n
}

/// `<tag a="v" …>bytes</tag>`.
pub(crate) fn bytes_node(tag: &str, attrs: &[(&str, NodeValue)], bytes: Vec<u8>) -> Node {
    let mut n = node(tag, attrs, Vec::new());
    n.content = Some(NodeContent::Bytes(bytes));
    n
}

/// A string attribute value.
pub(crate) fn s(v: impl Into<String>) -> NodeValue {
    NodeValue::from(v.into())
}

/// A JID attribute value.
pub(crate) fn j(v: &Jid) -> NodeValue {
    NodeValue::Jid(v.clone())
}

pub(crate) fn attr(n: &Node, key: &str) -> Option<String> {
    n.attrs.get(key).map(|v| v.as_str().into_owned())
}

pub(crate) fn jid_attr(n: &Node, key: &str) -> Option<Jid> {
    n.attrs.get(key).and_then(|v| v.to_jid())
}

pub(crate) fn child<'a>(n: &'a Node, tag: &str) -> Option<&'a Node> {
    n.get_optional_child(tag)
}

pub(crate) fn children<'a>(n: &'a Node, tag: &'a str) -> impl Iterator<Item = &'a Node> {
    n.get_children_by_tag(tag)
}

pub(crate) fn content_bytes(n: &Node) -> Option<&[u8]> {
    match &n.content {
        Some(NodeContent::Bytes(b)) => Some(b),
        Some(NodeContent::String(s)) => Some(s.as_bytes()),
        _ => None,
    }
}

/// A child's bytes.
pub(crate) fn child_bytes(n: &Node, tag: &str) -> Option<Vec<u8>> {
    child(n, tag).and_then(content_bytes).map(<[u8]>::to_vec)
}

/// A big-endian unsigned integer in a child's bytes (ids, registration).
pub(crate) fn child_uint(n: &Node, tag: &str) -> Option<u32> {
    let b = child_bytes(n, tag)?;
    if b.is_empty() || b.len() > 4 {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, x| acc << 8 | u32::from(*x)))
}

/// `jid`'s user and device, whatever its server.
pub(crate) fn pn(user: &str, device: u16) -> Jid {
    Jid::pn_device(user.to_string(), device)
}

pub(crate) fn lid(user: &str, device: u16) -> Jid {
    Jid::lid_device(user.to_string(), device)
}

/// The node in WhatsApp's XML-like notation, for logs and failures.
pub(crate) fn render(n: &Node) -> String {
    let mut out = String::new();
    render_into(n, &mut out, 0);
    out
}

fn render_into(n: &Node, out: &mut String, depth: usize) {
    let pad = "  ".repeat(depth);
    let _ = write!(out, "{pad}<{}", n.tag);
    for (k, v) in n.attrs.iter() {
        let _ = write!(out, " {k}=\"{}\"", v.as_str());
    }
    match &n.content {
        None => out.push_str("/>\n"),
        Some(NodeContent::Nodes(kids)) => {
            out.push_str(">\n");
            for k in kids {
                render_into(k, out, depth + 1);
            }
            let _ = writeln!(out, "{pad}</{}>", n.tag);
        }
        Some(NodeContent::Bytes(b)) => match std::str::from_utf8(b) {
            Ok(t) if b.len() <= 64 && t.chars().all(|c| !c.is_control()) => {
                let _ = writeln!(out, ">{t}</{}>", n.tag);
            }
            _ => {
                let _ = writeln!(out, ">[{} bytes]</{}>", b.len(), n.tag);
            }
        },
        Some(NodeContent::String(t)) => {
            let _ = writeln!(out, ">{t}</{}>", n.tag);
        }
    }
}
