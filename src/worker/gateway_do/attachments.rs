//! Sockets' attachments as this instance last read them. Reading one back
//! from the runtime crosses into JS and walks a JS object, and a chat turn
//! reads several (the client's frame, its session's link, the link's
//! answers); here a socket's JS object leads to its parsed attachment.
//! Every attachment written drops them all (`save_attachment` through
//! `forget_sockets`, which also runs as a client's socket opens and any
//! socket closes), so nothing kept is older than the runtime's copy, which
//! alone survives hibernation. A socket not read since has nothing kept
//! to go stale. They are shared, not copied: a socket watching many
//! sessions has a long attachment, read with every frame it sends.

use super::Attachment;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use worker::WebSocket;

/// Attachments kept at most between two changes.
const MAX_KEPT: usize = 10_000;

#[derive(Default)]
pub(super) struct KeptAttachments {
    /// Socket → index into `kept`, so a closed socket's entry goes with it.
    ids: RefCell<Option<js_sys::WeakMap>>,
    kept: RefCell<Vec<Rc<Attachment>>>,
}

impl KeptAttachments {
    /// `ws`'s attachment, from the runtime the first time after a change.
    pub fn read(&self, ws: &WebSocket) -> worker::Result<Option<Rc<Attachment>>> {
        let key: &js_sys::Object = AsRef::<worker::web_sys::WebSocket>::as_ref(ws).as_ref();
        let mut ids = self.ids.borrow_mut();
        let ids = ids.get_or_insert_with(js_sys::WeakMap::new);
        if let Some(i) = ids.get(key).as_f64() {
            if let Some(att) = self.kept.borrow().get(i as usize) {
                return Ok(Some(att.clone()));
            }
        }
        let att = ws.deserialize_attachment::<Attachment>()?.map(Rc::new);
        if let Some(att) = &att {
            let mut kept = self.kept.borrow_mut();
            if kept.len() >= MAX_KEPT {
                // More than the sockets a gateway holds: start over.
                kept.clear();
                *ids = js_sys::WeakMap::new();
            }
            ids.set(key, &JsValue::from(kept.len() as f64));
            kept.push(att.clone());
        }
        Ok(att)
    }

    pub fn clear(&self) {
        self.ids.replace(None);
        self.kept.borrow_mut().clear();
    }
}
