//! Sockets' attachments as this instance last read or wrote them.
//! Reading one back from the runtime crosses into JS and walks a JS
//! object, and a chat turn reads several (the client's frame, its
//! session's link, the link's answers); here a socket's JS object leads to
//! its parsed attachment. Every attachment this instance writes goes
//! through `save_attachment`, which keeps what it wrote, so nothing kept
//! is older than the runtime's copy (which alone survives hibernation).
//! A write changes that socket's copy only: the others are not read again.
//! They are shared, not copied: a socket watching many sessions has a long
//! attachment, read with every frame it sends.

use super::Attachment;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use worker::WebSocket;

/// Attachments kept at most (closed sockets' too, until this many): more
/// than the sockets a personal gateway holds.
const MAX_KEPT: usize = 1_000;

#[derive(Default)]
pub(super) struct KeptAttachments {
    /// Socket → index into `kept`, so a closed socket's entry goes with it.
    ids: RefCell<Option<js_sys::WeakMap>>,
    kept: RefCell<Vec<Rc<Attachment>>>,
}

impl KeptAttachments {
    /// `ws`'s attachment, from the runtime the first time it is read.
    pub fn read(&self, ws: &WebSocket) -> worker::Result<Option<Rc<Attachment>>> {
        if let Some(att) = self.kept_for(ws) {
            return Ok(Some(att));
        }
        let att = ws.deserialize_attachment::<Attachment>()?.map(Rc::new);
        if let Some(att) = &att {
            self.keep(ws, att.clone());
        }
        Ok(att)
    }

    /// `att` was just written as `ws`'s attachment (or read from it).
    pub fn keep(&self, ws: &WebSocket, att: Rc<Attachment>) {
        let mut ids = self.ids.borrow_mut();
        let ids = ids.get_or_insert_with(js_sys::WeakMap::new);
        let mut kept = self.kept.borrow_mut();
        if let Some(slot) = ids
            .get(key(ws))
            .as_f64()
            .and_then(|i| kept.get_mut(i as usize))
        {
            *slot = att;
            return;
        }
        if kept.len() >= MAX_KEPT {
            // Closed sockets' too: start over.
            kept.clear();
            *ids = js_sys::WeakMap::new();
        }
        ids.set(key(ws), &JsValue::from(kept.len() as f64));
        kept.push(att);
    }

    fn kept_for(&self, ws: &WebSocket) -> Option<Rc<Attachment>> {
        let ids = self.ids.borrow();
        let i = ids.as_ref()?.get(key(ws)).as_f64()?;
        self.kept.borrow().get(i as usize).cloned()
    }
}

/// The socket's JS object, which a `WeakMap` may be keyed by.
fn key(ws: &WebSocket) -> &js_sys::Object {
    AsRef::<worker::web_sys::WebSocket>::as_ref(ws).as_ref()
}
