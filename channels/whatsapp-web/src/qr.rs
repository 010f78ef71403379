//! The QR code a phone scans to link, as an image for the web UI: an SVG
//! in a `data:` URL (the CLI draws the code's text itself).

use base64::Engine;
use qrcode::render::svg;
use qrcode::QrCode;

/// `data:image/svg+xml;base64,…` of the code for `text`, or `None` when
/// the text is too long for a QR code.
pub fn data_url(text: &str) -> Option<String> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    let image = code
        .render::<svg::Color<'_>>()
        .min_dimensions(264, 264)
        .quiet_zone(true)
        .build();
    let encoded = base64::engine::general_purpose::STANDARD.encode(image);
    Some(format!("data:image/svg+xml;base64,{encoded}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_becomes_an_svg_image() {
        let url = data_url("2@abc,def,ghi,jkl").expect("a QR code");
        let b64 = url
            .strip_prefix("data:image/svg+xml;base64,")
            .expect("prefix");
        let svg = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64"),
        )
        .expect("utf-8");
        assert!(svg.starts_with("<?xml"), "{svg}");
        assert!(svg.contains("<svg") && svg.contains("<path"), "{svg}");
        // Too long for any QR code.
        assert_eq!(data_url(&"x".repeat(8000)), None);
    }
}
