//! One client's observed properties: each is reported once when observed
//! and again whenever its value changes (`property-change` events).

use serde_json::Value;

use super::codec::property_change;
use super::properties::Snapshot;

struct Observer {
    id: Value,
    name: String,
    /// What was last sent: None before the first report, Some(None) for
    /// "unavailable".
    sent: Option<Option<Value>>,
}

#[derive(Default)]
pub struct Observers {
    list: Vec<Observer>,
}

impl Observers {
    /// Observes `name`; unknown names are accepted and reported without
    /// data, as mpv does.
    pub fn observe(&mut self, id: Value, name: &str) {
        self.list.push(Observer {
            id,
            name: name.to_string(),
            sent: None,
        });
    }

    pub fn unobserve(&mut self, id: &Value) {
        self.list.retain(|o| &o.id != id);
    }

    /// The `property-change` events due since the last call.
    pub fn changes(&mut self, snapshot: &Snapshot) -> Vec<String> {
        let mut events = Vec::new();
        for observer in &mut self.list {
            let value = snapshot.get_path(&observer.name).ok();
            if observer.sent.as_ref() != Some(&value) {
                events.push(property_change(
                    &observer.id,
                    &observer.name,
                    value.as_ref(),
                ));
                observer.sent = Some(value);
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn idle(paused: bool) -> Snapshot {
        Snapshot {
            paused,
            volume: 100.0,
            muted: false,
            fullscreen: false,
            playlist: vec![],
            playlist_ids: vec![],
            current: None,
            loaded: None,
            osd_level: 1,
            speed: 1.0,
            sub_delay: 0.0,
            sub_visibility: true,
            loop_playlist: false,
        }
    }

    #[test]
    fn reports_once_then_on_change() {
        let mut observers = Observers::default();
        observers.observe(json!(1), "pause");
        observers.observe(json!(2), "time-pos");
        assert_eq!(
            observers.changes(&idle(false)),
            vec![
                r#"{"event":"property-change","id":1,"name":"pause","data":false}"#,
                r#"{"event":"property-change","id":2,"name":"time-pos"}"#,
            ]
        );
        assert!(observers.changes(&idle(false)).is_empty());
        assert_eq!(observers.changes(&idle(true)).len(), 1);
        observers.unobserve(&json!(1));
        assert!(observers.changes(&idle(false)).is_empty());
    }
}
