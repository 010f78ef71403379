//! A `multipart/form-data` body (RFC 7578), as the platforms' file
//! uploads take them: text fields, then files, each part named.

/// A form being written; [`Form::finish`] gives its `Content-Type` and body.
pub struct Form {
    boundary: String,
    body: Vec<u8>,
}

impl Form {
    /// `boundary` must not occur in any part (a random one does not).
    pub fn new(boundary: &str) -> Self {
        Self {
            boundary: boundary.to_string(),
            body: Vec::new(),
        }
    }

    pub fn field(&mut self, name: &str, value: &str) -> &mut Self {
        self.head(name, None, None);
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
        self
    }

    /// A text field with its own `Content-Type` (Discord's `payload_json`).
    pub fn typed_field(&mut self, name: &str, content_type: &str, value: &str) -> &mut Self {
        self.head(name, None, Some(content_type));
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
        self
    }

    pub fn file(&mut self, name: &str, filename: &str, mime: &str, bytes: &[u8]) -> &mut Self {
        self.head(name, Some(&clean_filename(filename)), Some(mime));
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
        self
    }

    /// The `Content-Type` header (with the boundary) and the body.
    pub fn finish(mut self) -> (String, Vec<u8>) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            format!("multipart/form-data; boundary={}", self.boundary),
            self.body,
        )
    }

    fn head(&mut self, name: &str, filename: Option<&str>, content_type: Option<&str>) {
        let mut head = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"{name}\"",
            self.boundary
        );
        if let Some(filename) = filename {
            head.push_str(&format!("; filename=\"{filename}\""));
        }
        if let Some(content_type) = content_type {
            head.push_str(&format!("\r\nContent-Type: {content_type}"));
        }
        head.push_str("\r\n\r\n");
        self.body.extend_from_slice(head.as_bytes());
    }
}

/// A file name that cannot break out of its quotes or name a path:
/// quotes, slashes and control characters become `_`; an empty name `file`.
pub fn clean_filename(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| match c {
            '"' | '/' | '\\' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    match name.trim().is_empty() {
        true => "file".to_string(),
        false => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_of_fields_and_a_file() {
        let mut form = Form::new("XyZ");
        form.field("chat_id", "42")
            .typed_field("payload_json", "application/json", "{}")
            .file("photo", "a\"b/c\r.png", "image/png", b"\x89PNG");
        let (content_type, body) = form.finish();
        assert_eq!(content_type, "multipart/form-data; boundary=XyZ");
        assert_eq!(
            body,
            b"--XyZ\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n42\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n{}\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a_b_c_.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\
--XyZ--\r\n"
                .to_vec()
        );
    }

    #[test]
    fn a_file_name_stays_inside_its_quotes() {
        assert_eq!(clean_filename("report.pdf"), "report.pdf");
        assert_eq!(clean_filename("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(clean_filename("x\"; name=\"y"), "x_; name=_y");
        assert_eq!(clean_filename(" "), "file");
        assert_eq!(clean_filename("übersicht.md"), "übersicht.md");
    }
}
