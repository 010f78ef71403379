//! MIME types: the file extension a stored file gets (the seed layout's
//! table, extended with the text types people send), what kind of media a
//! type is, and the type of a file known only by its name (workspace
//! files sent out, uploads without a useful `Content-Type`).

use super::MediaType;

/// `image/JPEG; charset=x` → `image/jpeg`.
pub fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The extension of a stored file of type `mime` (`bin` when unknown).
pub fn extension(mime: &str) -> &'static str {
    match essence(mime).as_str() {
        "image/jpeg" | "image/jpg" => "jpg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/heic" => "heic",
        "audio/ogg" => "ogg",
        "audio/opus" => "opus",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/mp4" | "audio/m4a" | "audio/x-m4a" => "m4a",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/webm" => "webm",
        "audio/flac" => "flac",
        "audio/aac" => "aac",
        "audio/amr" => "amr",
        "video/mp4" => "mp4",
        "video/webm" => "webm",
        "video/quicktime" => "mov",
        "video/3gpp" => "3gp",
        "application/pdf" => "pdf",
        "application/msword" => "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.ms-excel" => "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        "application/zip" => "zip",
        "application/json" => "json",
        "application/xml" | "text/xml" => "xml",
        "application/x-yaml" | "application/yaml" | "text/yaml" => "yaml",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/csv" => "csv",
        "text/html" => "html",
        _ => "bin",
    }
}

/// The kind of media a type is: images, audio and video by their top
/// type (SVG is a document: no model takes it as an image), the rest
/// documents.
pub fn media_type(mime: &str) -> MediaType {
    let mime = essence(mime);
    match mime.split('/').next() {
        Some("image") if mime != "image/svg+xml" => MediaType::Image,
        Some("audio") => MediaType::Audio,
        Some("video") => MediaType::Video,
        _ => MediaType::Document,
    }
}

/// The type of a file named `name`, by its extension.
pub fn from_filename(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "heic" => "image/heic",
        "ogg" | "oga" => "audio/ogg",
        "opus" => "audio/opus",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "wav" => "audio/wav",
        "flac" => "audio/flac",
        "aac" => "audio/aac",
        "amr" => "audio/amr",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        "3gp" => "video/3gpp",
        "pdf" => "application/pdf",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "zip" => "application/zip",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "text/yaml",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "txt" | "log" | "text" => "text/plain",
        _ if CODE_EXTENSIONS.contains(&ext.as_str()) => "text/plain",
        _ => return None,
    })
}

/// The type to store a file under: the one declared, unless it says
/// nothing (`application/octet-stream`, empty), then the one its name
/// gives, else `application/octet-stream`.
pub fn resolve(declared: Option<&str>, filename: Option<&str>) -> String {
    let declared = declared
        .map(essence)
        .filter(|d| !d.is_empty() && d != "application/octet-stream" && d.contains('/'));
    declared
        .or_else(|| filename.and_then(from_filename).map(str::to_string))
        .unwrap_or_else(|| "application/octet-stream".to_string())
}

/// Source code and config files people paste as documents; read as text.
const CODE_EXTENSIONS: &[&str] = &[
    "rs",
    "py",
    "js",
    "mjs",
    "ts",
    "tsx",
    "jsx",
    "go",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "rb",
    "php",
    "swift",
    "sh",
    "bash",
    "zsh",
    "sql",
    "toml",
    "ini",
    "cfg",
    "conf",
    "css",
    "scss",
    "lua",
    "r",
    "pl",
    "ex",
    "exs",
    "hs",
    "scala",
    "dart",
    "vue",
    "svelte",
    "tex",
    "rst",
    "org",
    "env",
    "dockerfile",
    "makefile",
    "gradle",
    "tf",
    "proto",
    "graphql",
];

/// Whether a document is text the model can read as is: `text/*`, JSON,
/// XML, YAML, SVG, or a name with a text or code extension.
pub fn is_text_like(mime: &str, filename: Option<&str>) -> bool {
    let mime = essence(mime);
    let by_type = mime.starts_with("text/")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/x-yaml"
                | "application/yaml"
                | "application/javascript"
                | "application/x-sh"
                | "application/toml"
                | "image/svg+xml"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml");
    let by_name = filename.and_then(from_filename).is_some_and(|m| {
        m.starts_with("text/") || m == "application/json" || m == "application/xml"
    });
    by_type || by_name
}
