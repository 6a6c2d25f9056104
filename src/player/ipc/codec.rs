//! mpv's JSON IPC framing: one JSON object per line each way. A request is
//! `{"command": [name, args...], "request_id": any}`; a reply is
//! `{"data": ..., "request_id": ..., "error": "success"}` (no `data` on
//! failure and for the property-access commands, as mpv does).

use serde_json::Value;

/// Failures, worded as mpv words them on the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcError {
    InvalidParameter,
    PropertyNotFound,
    PropertyUnavailable,
    UnsupportedFormat,
    /// Setting a read-only property.
    PropertyError,
    CommandFailed,
}

impl IpcError {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidParameter => "invalid parameter",
            Self::PropertyNotFound => "property not found",
            Self::PropertyUnavailable => "property unavailable",
            Self::UnsupportedFormat => "unsupported format for accessing property",
            Self::PropertyError => "error accessing property",
            Self::CommandFailed => "error running command",
        }
    }
}

/// What a request asks: the command array and the id echoed in the reply
/// (0 when the client gave none, as mpv does).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub command: Vec<Value>,
    pub request_id: Value,
}

/// What one line from a client is.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Request(Request),
    /// JSON that is not a request: answered with this error.
    Invalid(IpcError),
    /// An input.conf-style command (`seek 10 absolute`), as mpv also
    /// takes on its socket: run, with no reply, as mpv gives none.
    Text(Vec<Value>),
    Blank,
}

pub fn parse_line(line: &str) -> Line {
    let line = line.trim();
    if line.is_empty() {
        return Line::Blank;
    }
    if !line.starts_with('{') {
        return Line::Text(words(line).into_iter().map(Value::String).collect());
    }
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(line) else {
        return Line::Invalid(IpcError::InvalidParameter);
    };
    let request_id = object.remove("request_id").unwrap_or(Value::from(0));
    match object.remove("command") {
        Some(Value::Array(command)) if !command.is_empty() => Line::Request(Request {
            command,
            request_id,
        }),
        _ => Line::Invalid(IpcError::InvalidParameter),
    }
}

/// A text command's words: split at blanks, `"double quoted"` words kept
/// whole (for paths with spaces), a `#` starting a comment.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '#' {
            break;
        } else if c == '"' {
            chars.next();
            let mut word = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => word.extend(chars.next()),
                    c => word.push(c),
                }
            }
            words.push(word);
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
            words.push(word);
        }
    }
    words
}

/// How a command went: `Ok(Some(data))` replies with `data`, `Ok(None)`
/// with no `data` field.
pub type Outcome = Result<Option<Value>, IpcError>;

pub fn reply(request_id: &Value, outcome: &Outcome) -> String {
    let id = request_id.to_string();
    match outcome {
        Ok(Some(data)) => format!(r#"{{"data":{data},"request_id":{id},"error":"success"}}"#),
        Ok(None) => format!(r#"{{"request_id":{id},"error":"success"}}"#),
        Err(e) => format!(r#"{{"request_id":{id},"error":"{}"}}"#, e.as_str()),
    }
}

/// The reply to a line that is not a request (mpv answers with id 0).
pub fn invalid_reply(error: IpcError) -> String {
    reply(&Value::from(0), &Err(error))
}

/// `{"event":"property-change","id":..,"name":..,"data":..}`; no `data`
/// when the property is unavailable.
pub fn property_change(id: &Value, name: &str, data: Option<&Value>) -> String {
    let name = Value::from(name);
    match data {
        Some(data) => {
            format!(r#"{{"event":"property-change","id":{id},"name":{name},"data":{data}}}"#)
        }
        None => format!(r#"{{"event":"property-change","id":{id},"name":{name}}}"#),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_requests_as_mpv_does() {
        assert_eq!(
            parse_line(r#"{"command": ["get_property", "pause"], "request_id": "abc"}"#),
            Line::Request(Request {
                command: vec![json!("get_property"), json!("pause")],
                request_id: json!("abc"),
            })
        );
        let Line::Request(request) = parse_line(r#"{"command":["quit"]}"#) else {
            panic!("not a request");
        };
        assert_eq!(request.request_id, json!(0));
        for bad in [
            r#"{"command": ["get_property", "pause""#,
            r#"{"command": "get_property"}"#,
            r#"{"command": []}"#,
            r#"{"request_id": 3}"#,
            "{",
        ] {
            assert_eq!(
                parse_line(bad),
                Line::Invalid(IpcError::InvalidParameter),
                "{bad}"
            );
        }
        assert_eq!(
            parse_line("cycle pause"),
            Line::Text(vec![json!("cycle"), json!("pause")])
        );
        assert_eq!(
            parse_line(r#"loadfile "/m/a b.mp4" append # later"#),
            Line::Text(vec![
                json!("loadfile"),
                json!("/m/a b.mp4"),
                json!("append")
            ])
        );
        assert_eq!(parse_line("  \r"), Line::Blank);
    }

    #[test]
    fn replies_in_mpvs_shapes() {
        assert_eq!(
            reply(&json!(7), &Ok(Some(json!({"playlist_entry_id": 1})))),
            r#"{"data":{"playlist_entry_id":1},"request_id":7,"error":"success"}"#
        );
        assert_eq!(
            reply(&json!(4), &Ok(None)),
            r#"{"request_id":4,"error":"success"}"#
        );
        assert_eq!(
            reply(&json!(3), &Err(IpcError::PropertyUnavailable)),
            r#"{"request_id":3,"error":"property unavailable"}"#
        );
        assert_eq!(
            property_change(&json!(2), "time-pos", None),
            r#"{"event":"property-change","id":2,"name":"time-pos"}"#
        );
    }
}
