//! Identifier parts: `getUserById`, `get_user_by_id` and `GetUserByID` all
//! split into `get user by id`, which is how people type a name they only
//! half remember, and how both tiers compare names.

/// The lowercase parts of `text`: split at every character that is not a
/// letter or digit, at lower→upper case changes, before the last capital of
/// an acronym followed by lowercase (`HTTPServer`: `http server`), and
/// between letters and digits.
pub fn split(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_alphabetic() && cur.is_numeric())
                || (prev.is_numeric() && cur.is_alphabetic());
            if boundary {
                parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            parts.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    parts
}

/// `text` lowercased with every separator removed: `get_user_by_id` and
/// `getUserById` are both `getuserbyid`.
pub fn squashed(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_camel_snake_acronyms_and_digits() {
        assert_eq!(split("getUserById"), ["get", "user", "by", "id"]);
        assert_eq!(split("get_user_by_id"), ["get", "user", "by", "id"]);
        assert_eq!(split("GetUserByID"), ["get", "user", "by", "id"]);
        assert_eq!(split("HTTPServer"), ["http", "server"]);
        assert_eq!(split("Acme.Foo::bar2"), ["acme", "foo", "bar", "2"]);
        assert_eq!(split("get user  by id"), ["get", "user", "by", "id"]);
        assert!(split("").is_empty());
        assert_eq!(squashed("Get_User-ById"), "getuserbyid");
    }
}
