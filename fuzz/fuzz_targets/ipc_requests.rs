//! mpv JSON IPC requests as a client could send them: each line framed,
//! parsed (JSON or input.conf-style text) and turned into a command; every reply must be one line of JSON
//! carrying the request's id. Errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::player::ipc::codec::{self, Line};
use reel::player::ipc::commands;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let reply = match codec::parse_line(&text) {
            Line::Blank => continue,
            Line::Text(command) => {
                let _ = commands::parse(&command);
                continue;
            }
            Line::Invalid(error) => codec::invalid_reply(error),
            Line::Request(request) => {
                let outcome = commands::parse(&request.command).map(|_| None);
                codec::reply(&request.request_id, &outcome)
            }
        };
        assert!(!reply.contains('\n'), "a reply spans lines: {reply}");
        let parsed: serde_json::Value = serde_json::from_str(&reply).expect("reply is JSON");
        assert!(parsed.get("error").is_some_and(|e| e.is_string()));
    }
});
