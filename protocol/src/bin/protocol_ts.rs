//! Writes the wire types as TypeScript (`gsv_protocol::ts`) to the file
//! named on the command line, leaving it untouched when nothing changed
//! (so the UI build's inputs keep their times).

fn main() -> Result<(), String> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: protocol-ts OUTPUT.ts")?;
    let text = gsv_protocol::ts::bindings()?;
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("{path}: {e}"))
}
