//! YAML → `serde_json::Value`, for SKILL.md frontmatter.
//!
//! Why `saphyr-parser`: it is a complete YAML 1.2 parser (it passes the
//! YAML test suite), pure safe Rust, actively maintained by the saphyr
//! project, and builds for wasm32 with no feature work. Measured on a
//! wasm32 cdylib (opt-level "s", LTO) that turns YAML into a JSON value,
//! gzip -9 bytes added over serde_json alone: saphyr-parser +47 KB,
//! serde_yaml_ng / serde_norway (unsafe-libyaml) +51 KB, saphyr (with its
//! loader) +56 KB, yaml-rust2 +59 KB, serde-saphyr +213 KB. We only need
//! the event stream, so the small builder below (core-schema scalar
//! resolution, anchors and aliases, duplicate-key check) replaces a loader.

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value};

/// More nodes than any frontmatter needs; bounds alias expansion
/// ("billion laughs") so a hostile SKILL.md cannot exhaust memory.
const MAX_NODES: usize = 10_000;

/// An open collection, its anchor id and where it started.
enum Frame {
    Seq(Vec<Value>, usize, Marker),
    /// The mapping and its pending key (with where the key starts).
    Map(Map<String, Value>, Option<(String, Marker)>, usize, Marker),
}

/// Why a YAML text could not be read, and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// Parses the first YAML document in `src`. An empty document is `Null`.
pub fn parse(src: &str) -> Result<Value, YamlError> {
    let mut stack: Vec<Frame> = Vec::new();
    // Anchor ids count up from 1; a frontmatter has few, so a list will do.
    let mut anchors: Vec<(usize, Value)> = Vec::new();
    let mut root: Option<Value> = None;
    let mut nodes = 0usize;
    for event in Parser::new_from_str(src) {
        let (event, span) = event.map_err(|e| YamlError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        let at_mark = |mark: Marker, msg: &str| YamlError {
            line: mark.line(),
            column: mark.col() + 1,
            message: msg.to_string(),
        };
        let at = |msg: &str| at_mark(span.start, msg);
        let done = match event {
            Event::Scalar(text, style, anchor, tag) => {
                Some((scalar(&text, style, tag.as_deref()), anchor, span.start))
            }
            Event::Alias(id) => {
                let v = anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| at("alias refers to an unknown anchor"))?;
                nodes += count(&v);
                Some((v, 0, span.start))
            }
            Event::SequenceStart(anchor, _) => {
                stack.push(Frame::Seq(Vec::new(), anchor, span.start));
                None
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Frame::Map(Map::new(), None, anchor, span.start));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq(items, anchor, start)) => {
                    Some((Value::Array(items), anchor, start))
                }
                Some(Frame::Map(map, _, anchor, start)) => {
                    Some((Value::Object(map), anchor, start))
                }
                None => return Err(at("unbalanced collection end")),
            },
            Event::DocumentEnd => break,
            _ => None,
        };
        let Some((value, anchor, start)) = done else {
            continue;
        };
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(at("document too large (more than 10000 values)"));
        }
        if anchor > 0 {
            anchors.push((anchor, value.clone()));
        }
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Seq(items, ..)) => items.push(value),
            Some(Frame::Map(map, key, ..)) => match key.take() {
                Some((k, key_start)) => {
                    if map.contains_key(&k) {
                        return Err(at_mark(key_start, &format!("duplicate key `{k}`")));
                    }
                    map.insert(k, value);
                }
                None => {
                    let k = match value {
                        Value::String(s) => s,
                        Value::Null => "null".to_string(),
                        Value::Bool(_) | Value::Number(_) => value.to_string(),
                        _ => {
                            return Err(at(
                                "mapping keys must be plain values, not lists or mappings",
                            ))
                        }
                    };
                    *key = Some((k, start));
                }
            },
        }
    }
    Ok(root.unwrap_or(Value::Null))
}

fn count(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(count).sum::<usize>(),
        Value::Object(m) => 1 + m.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// YAML 1.2 core schema: quoted and block scalars are strings; plain ones
/// resolve to null, booleans, integers or floats when they look like one.
/// A `!!str` tag forces a string. Infinities and NaN, which JSON cannot
/// hold, stay strings.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    let forced_str = tag.is_some_and(|t| t.is_yaml_core_schema() && t.suffix == "str");
    if style != ScalarStyle::Plain || forced_str {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = int(text) {
        return Value::Number(n.into());
    }
    if is_float(text) {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(text.to_string())
}

fn int(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8).ok();
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int_part)
        && frac.is_none_or(digits)
        && (!int_part.is_empty() || frac.is_some_and(|f| !f.is_empty()));
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exp_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn core_schema_values() {
        let src = "name: github\nalways: true\nn: 12\nhex: 0x1f\nf: 1.5\nexp: 2e3\nnothing: ~\nempty:\nquoted: \"true\"\ntagged: !!str 12\ninf: .inf\nver: 1.2.3\nlist: [gh, \"git\"]\nblock: |\n  line one\n  line two\n";
        assert_eq!(
            parse(src).unwrap(),
            json!({
                "name": "github", "always": true, "n": 12, "hex": 31, "f": 1.5, "exp": 2000.0,
                "nothing": null, "empty": null, "quoted": "true", "tagged": "12", "inf": ".inf",
                "ver": "1.2.3", "list": ["gh", "git"], "block": "line one\nline two\n"
            })
        );
    }

    #[test]
    fn nested_mappings_and_anchors() {
        let src = "base: &b\n  bins: [gh]\nmetadata:\n  gsv:\n    requires: *b\n";
        assert_eq!(
            parse(src).unwrap(),
            json!({"base": {"bins": ["gh"]}, "metadata": {"gsv": {"requires": {"bins": ["gh"]}}}})
        );
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(parse("").unwrap(), Value::Null);
        assert_eq!(parse("# only a comment\n").unwrap(), Value::Null);
    }

    #[test]
    fn errors_name_the_place() {
        assert_eq!(
            parse("a: 1\na: 2\n").unwrap_err().to_string(),
            "line 2 column 1: duplicate key `a`"
        );
        assert_eq!(
            parse("? [a]\n: 1\n").unwrap_err().to_string(),
            "line 1 column 5: mapping keys must be plain values, not lists or mappings"
        );
        let unclosed = parse("name: [a, b\n").unwrap_err();
        assert_eq!(unclosed.line, 2, "{unclosed}");
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut src = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let p = (b'a' + i - 1) as char;
            let c = (b'a' + i) as char;
            src.push_str(&format!(
                "{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            ));
        }
        let err = parse(&src).unwrap_err();
        assert_eq!(err.message, "document too large (more than 10000 values)");
    }
}
