//! A property's value as text, as mpv's `get_property_string` gives it:
//! flags as `yes`/`no`, numbers with six decimals, strings as they are,
//! lists and maps as JSON with the same numbers.

use serde_json::Value;

/// `value` in mpv's string form.
pub fn as_mpv_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => {
            let mut out = String::new();
            write_value(&mut out, other);
            out
        }
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("yes"),
        Value::Bool(false) => out.push_str("no"),
        Value::Number(n) if n.is_i64() || n.is_u64() => out.push_str(&n.to_string()),
        Value::Number(n) => out.push_str(&format!("{:.6}", n.as_f64().unwrap_or(0.0))),
        Value::String(text) => out.push_str(&Value::String(text.clone()).to_string()),
        Value::Array(list) => {
            out.push('[');
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_nested(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_nested(out, item);
            }
            out.push('}');
        }
    }
}

/// Inside a list or map, flags are JSON's `true`/`false`.
fn write_nested(out: &mut String, value: &Value) {
    match value {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        other => write_value(out, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats_as_mpv() {
        assert_eq!(as_mpv_string(&json!(true)), "yes");
        assert_eq!(as_mpv_string(&json!(false)), "no");
        assert_eq!(as_mpv_string(&json!(320)), "320");
        assert_eq!(as_mpv_string(&json!(0.5)), "0.500000");
        assert_eq!(as_mpv_string(&json!("a b")), "a b");
        assert_eq!(
            as_mpv_string(&json!({"w": 320, "aspect": 1.5, "s": "x"})),
            r#"{"aspect":1.500000,"s":"x","w":320}"#
        );
    }
}
