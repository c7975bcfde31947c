//! Values users write, read one way by every command and front end: times
//! (`--since`, `--until`) and "one or several" parameters.

use serde::Deserialize;

/// Seconds since the epoch from RFC 3339, epoch seconds (`1700000000` or
/// `@1700000000`), a date, or a relative time (`2 hours ago`).
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    diffidx_core::git::parse_date(text)
}

/// A string or a list of strings, in a JSON schema.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Reads a string or a list of strings as a list.
pub(crate) fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Either::deserialize(d)? {
        Either::One(s) => vec![s],
        Either::Many(v) => v,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_read_in_every_documented_form() {
        assert_eq!(parse_time("1700000000"), Some(1_700_000_000));
        assert_eq!(parse_time("@1700000000"), Some(1_700_000_000));
        assert_eq!(parse_time("2023-11-14T22:13:20Z"), Some(1_700_000_000));
        assert_eq!(parse_time("2023-11-14T23:13:20+01:00"), Some(1_700_000_000));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let ago = parse_time("2 hours ago").unwrap();
        assert!((now - 7200 - ago).abs() < 60, "{ago}");
        assert_eq!(parse_time("soon"), None);
        assert_eq!(parse_time(""), None);
    }
}
