//! `docs/releases.md` lists every [`Change`] of the code's table, with the
//! release it came in, and no change the table lacks.

use matchspec::{Change, Release};

#[test]
fn the_release_notes_list_every_change() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/releases.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| `")).collect();
    for change in Change::ALL {
        let row = rows
            .iter()
            .find(|r| r.starts_with(&format!("| `{}` |", change.name())))
            .unwrap_or_else(|| panic!("docs/releases.md has no row for {}", change.name()));
        let since = format!("| OTP {}", change.since().major());
        assert!(row.contains(&since), "{}: the row does not say {since}: {row}", change.name());
    }
    let named: Vec<&str> = Change::ALL.iter().map(|c| c.name()).collect();
    for row in rows {
        let name = row.trim_start_matches("| `").split('`').next().unwrap_or("");
        assert!(named.contains(&name), "docs/releases.md lists {name}, which the code lacks");
    }
}

#[test]
fn every_change_is_in_the_table_once() {
    for (i, change) in Change::ALL.iter().enumerate() {
        assert_eq!(Change::ALL.iter().position(|c| c == change), Some(i), "{change:?}");
        assert!(change.since() > Release::Otp27, "{change:?} changes nothing");
    }
}
