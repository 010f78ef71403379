//! `userTimezone` in the Worker: offsets from the runtime's own time-zone
//! database (`Intl.DateTimeFormat`), so no tz data ships in the wasm.

use crate::time::{TimeZone, Utc};
use js_sys::{Array, Date, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

pub struct IntlTimeZone {
    format_to_parts: Function,
    formatter: JsValue,
}

/// The configured `userTimezone` (UTC when unset or unknown).
pub fn user_time_zone(config: &crate::config::Config) -> Box<dyn TimeZone> {
    time_zone(config.str_at("userTimezone").unwrap_or("UTC"))
}

/// The zone named `name`; UTC when the runtime does not know it.
pub fn time_zone(name: &str) -> Box<dyn TimeZone> {
    match IntlTimeZone::new(name) {
        Some(tz) => Box::new(tz),
        None => Box::new(Utc),
    }
}

impl IntlTimeZone {
    pub fn new(name: &str) -> Option<Self> {
        if name.eq_ignore_ascii_case("utc") {
            return None;
        }
        let options = Object::new();
        let set = |k: &str, v: &str| Reflect::set(&options, &k.into(), &v.into()).ok();
        set("timeZone", name)?;
        set("hourCycle", "h23")?;
        for field in ["year", "month", "day", "hour", "minute", "second"] {
            set(field, "numeric")?;
        }
        let intl = Reflect::get(&js_sys::global(), &"Intl".into()).ok()?;
        let ctor: Function = Reflect::get(&intl, &"DateTimeFormat".into())
            .ok()?
            .dyn_into()
            .ok()?;
        // An unknown zone throws a RangeError: construct via Reflect to catch it.
        let args = Array::of2(&"en-US".into(), &options);
        let formatter = Reflect::construct(&ctor, &args).ok()?;
        let format_to_parts = Reflect::get(&formatter, &"formatToParts".into())
            .ok()?
            .dyn_into()
            .ok()?;
        Some(Self {
            format_to_parts,
            formatter,
        })
    }
}

impl TimeZone for IntlTimeZone {
    fn offset_ms(&self, utc_ms: i64) -> i64 {
        let at = Date::new(&JsValue::from_f64(utc_ms as f64));
        let Ok(parts) = self.format_to_parts.call1(&self.formatter, &at) else {
            return 0;
        };
        let mut fields = [0f64; 6];
        for part in Array::from(&parts).iter() {
            let kind = Reflect::get(&part, &"type".into())
                .ok()
                .and_then(|v| v.as_string());
            let value = Reflect::get(&part, &"value".into())
                .ok()
                .and_then(|v| v.as_string());
            let (Some(kind), Some(value)) = (kind, value) else {
                continue;
            };
            let slot = match kind.as_str() {
                "year" => 0,
                "month" => 1,
                "day" => 2,
                "hour" => 3,
                "minute" => 4,
                "second" => 5,
                _ => continue,
            };
            fields[slot] = value.parse().unwrap_or(0.0);
        }
        let local_as_utc = Date::utc(fields[0], fields[1] - 1.0) as i64
            + ((fields[2] as i64 - 1) * 86_400
                + fields[3] as i64 * 3600
                + fields[4] as i64 * 60
                + fields[5] as i64)
                * 1000;
        // The formatter works in whole seconds.
        local_as_utc - (utc_ms - utc_ms.rem_euclid(1000))
    }
}
