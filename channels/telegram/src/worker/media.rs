//! The files people send, downloaded for the gateway: `getFile` for the
//! file's path, then the file from Telegram's file server, streamed back.

use super::account_do::TelegramAccount;
use super::bot_client::{self, api_base};
use crate::api::{self, explain_get_file, too_big_to_download, File};
use gsv_protocol::channels::*;
use worker::*;

impl TelegramAccount {
    /// A file someone sent (by its `file_id`): `getFile`, then the file
    /// from Telegram's file server, streamed back to the gateway. Refused
    /// unread when it is larger than the gateway takes, or than Telegram
    /// lets bots download (20 MB).
    pub(super) async fn fetch_media(&self, p: ChannelMediaFetchParams) -> Result<Response> {
        let refuse = |status: u16, error: String, size: Option<u64>| {
            Ok(Response::from_json(&MediaFetchRefusal { error, size })?.with_status(status))
        };
        // 413 is the gateway's own limit; Telegram's is said in words.
        let too_big = |size: Option<u64>| match size {
            Some(s) if s > p.max_bytes => Some((413, "larger than the gateway takes".to_string())),
            _ => too_big_to_download(size).map(|why| (422, why)),
        };
        let Some(file_id) = p.media.id.clone().filter(|id| !id.is_empty()) else {
            return refuse(400, "the media has no Telegram file_id".into(), None);
        };
        if let Some((status, why)) = too_big(p.media.size) {
            return refuse(status, why, p.media.size);
        }
        let Some(token) = self
            .current()
            .and_then(|a| a.token(self.env_token().as_deref()))
        else {
            return refuse(503, "the account has no bot token".into(), None);
        };
        let base = api_base(&self.env);
        let file: File = match bot_client::call(&base, &token, &api::get_file(&file_id)).await {
            Ok(f) => f,
            Err(e) => {
                let e = explain_get_file(e);
                let status = if e.message.contains("20 MB") {
                    422
                } else {
                    502
                };
                return refuse(status, e.message, None);
            }
        };
        if let Some((status, why)) = too_big(file.file_size) {
            return refuse(status, why, file.file_size);
        }
        let Some(path) = file.file_path.filter(|p| !p.is_empty()) else {
            return refuse(502, "Telegram gave no file_path to download".into(), None);
        };
        match bot_client::download(&base, &token, &path).await {
            Ok(resp) if resp.status_code() == 200 => Ok(resp),
            Ok(resp) => refuse(
                502,
                format!("Telegram answered {} for the file", resp.status_code()),
                None,
            ),
            Err(e) => refuse(502, e.message, None),
        }
    }
}
