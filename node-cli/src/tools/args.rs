//! Reading tool arguments with errors that name the field.
//!
//! Lenient where models often slip: numbers sent as strings ("5000") and
//! booleans sent as strings ("true") are accepted; `null` counts as absent.

use serde_json::{Map, Value};

pub struct Args(Map<String, Value>);

impl Args {
    pub fn new(value: Value) -> Result<Self, String> {
        match value {
            Value::Object(map) => Ok(Args(map)),
            Value::Null => Ok(Args(Map::new())),
            other => Err(format!(
                "arguments must be a JSON object, got {}",
                kind(&other)
            )),
        }
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(bad(name, "a string", other)),
        }
    }

    /// A required string (it may be empty).
    pub fn str(&self, name: &str) -> Result<String, String> {
        self.opt_str(name)?
            .ok_or_else(|| format!("missing required argument `{name}`"))
    }

    /// A required string that is not empty or only whitespace.
    pub fn non_empty_str(&self, name: &str) -> Result<String, String> {
        let s = self.str(name)?;
        if s.trim().is_empty() {
            return Err(format!("argument `{name}` must not be empty"));
        }
        Ok(s)
    }

    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, String> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        n.map(Some)
            .ok_or_else(|| bad(name, "a non-negative integer", v))
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(other) => Err(bad(name, "a boolean", other)),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, String> {
        Ok(self.opt_bool(name)?.unwrap_or(false))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn bad(name: &str, expected: &str, got: &Value) -> String {
    let mut shown = got.to_string();
    if shown.len() > 60 {
        shown = format!("{}…", crate::tools::text::head_chars(&shown, 60).0);
    }
    format!(
        "argument `{name}` must be {expected}, got {} {shown}",
        kind(got)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let a = Args::new(json!({"timeout": "soon", "n": 5, "s": "5", "b": "true", "z": null}))
            .unwrap();
        assert_eq!(
            a.opt_u64("timeout").unwrap_err(),
            "argument `timeout` must be a non-negative integer, got a string \"soon\""
        );
        assert_eq!(a.opt_u64("n").unwrap(), Some(5));
        assert_eq!(a.opt_u64("s").unwrap(), Some(5));
        assert_eq!(a.opt_bool("b").unwrap(), Some(true));
        assert_eq!(a.opt_str("z").unwrap(), None);
        assert_eq!(
            a.str("path").unwrap_err(),
            "missing required argument `path`"
        );
        assert_eq!(
            a.opt_str("n").unwrap_err(),
            "argument `n` must be a string, got a number 5"
        );
        assert_eq!(
            Args::new(json!([1])).err().unwrap(),
            "arguments must be a JSON object, got an array"
        );
    }
}
