//! Error messages for people: an error and its causes in one line, each
//! cause said once. Many of reel's errors already include their source in
//! their own text (so that `to_string()` stands alone); printing the chain
//! as anyhow's `{:#}` does would then repeat it.

use std::fmt;

/// `error: cause: cause ...`, leaving out a cause whose text is already
/// in what was said.
pub struct Causes<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut said = self.0.to_string();
        let mut cause = self.0.source();
        while let Some(error) = cause {
            let text = error.to_string();
            if !text.is_empty() && !said.contains(&text) {
                said.push_str(": ");
                said.push_str(&text);
            }
            cause = error.source();
        }
        f.write_str(&said)
    }
}

/// [`Causes`] of an `anyhow::Error` (its contexts and their sources).
pub fn causes(error: &anyhow::Error) -> String {
    Causes(error.as_ref()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("polling failed: {0}")]
    struct Embeds(#[source] std::io::Error);

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "pipe gone");
        let error = anyhow::Error::new(Embeds(io)).context("playing a.mp4");
        assert_eq!(
            format!("{error:#}"),
            "playing a.mp4: polling failed: pipe gone: pipe gone",
            "anyhow repeats it"
        );
        assert_eq!(causes(&error), "playing a.mp4: polling failed: pipe gone");
    }

    #[test]
    fn causes_not_yet_said_are_all_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(io)
            .context("cannot open /dev/video0")
            .context("no V4L2 decoder");
        assert_eq!(
            causes(&error),
            "no V4L2 decoder: cannot open /dev/video0: no such file"
        );
    }
}
