//! The reading order of the files of dbg wrap sets.
//!
//! `dbg:trace_port(file, {Name, wrap, Suffix, Size, Count})` writes
//! `Name ++ I ++ Suffix` for I = 0, 1, ..., Count, 0, ... and, once the set
//! has wrapped, deletes the oldest file before each new one, so exactly one
//! index is missing: the gap marks where the set starts. `dbg:trace_client`
//! finds the order from the names alone (`wrap_sort/2` in `dbg.erl`):
//!
//! * `0..k`: not wrapped yet, read in that order;
//! * `1..N`: read in that order;
//! * `0..C`, a gap of one, `C+2..N`: read `C+2..N`, then `0..C`.
//!
//! Anything else dbg refuses (`inconsistent_wrap_file_trace_set`), and so
//! does [`wrap_order`]. dbg also checks the highest index against the
//! `Count` it is given; the names alone do not say it, so msc takes the
//! highest index present (a set written with a larger Count that dbg,
//! given that Count, would refuse, is read here in the order the names
//! imply).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Files that look like one wrap set but are not one dbg reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrapSetError {
    /// The set's names, with `N` for the index (`wrap.N.trace`).
    pub pattern: String,
    /// The indexes present, in increasing order (with repeats).
    pub indexes: Vec<u64>,
}

impl fmt::Display for WrapSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let indexes: Vec<String> = self.indexes.iter().map(u64::to_string).collect();
        write!(
            f,
            "the files {} with N = {} are not a wrap set dbg reads: it needs 0..k, 1..N, \
             or 0..C and C+2..N (one index missing), each index once",
            self.pattern,
            indexes.join(", ")
        )
    }
}

impl std::error::Error for WrapSetError {}

/// The order to read `paths` in: each wrap set (two or more files named
/// alike but for the last run of digits in the name, in the same
/// directory) in dbg's order, at the place of its first file; every other
/// file where it is.
/// The result lists indexes into `paths`.
///
/// ```
/// use msc::stream::wrap_order;
///
/// let names = ["log.1.trace", "log.3.trace", "log.0.trace", "log.4.trace"];
/// let order = wrap_order(&names)?;
/// let read: Vec<&str> = order.iter().map(|&i| names[i]).collect();
/// assert_eq!(read, ["log.3.trace", "log.4.trace", "log.0.trace", "log.1.trace"]);
/// # Ok::<(), msc::stream::WrapSetError>(())
/// ```
pub fn wrap_order<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<usize>, WrapSetError> {
    // Members of each set by (directory, prefix, suffix), in order of first appearance.
    let mut sets: BTreeMap<(String, String, String), Vec<(u64, usize)>> = BTreeMap::new();
    let mut first_of: Vec<Option<(String, String, String)>> = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        match split(path.as_ref()) {
            Some((key, index)) => {
                let members = sets.entry(key.clone()).or_default();
                first_of.push(members.is_empty().then_some(key));
                members.push((index, i));
            }
            None => first_of.push(None),
        }
    }
    let mut order = Vec::with_capacity(paths.len());
    for (i, first) in first_of.into_iter().enumerate() {
        match first {
            Some(key) => {
                let mut members = sets.remove(&key).unwrap_or_default();
                if members.len() == 1 {
                    // One file is a file, whatever its name.
                    order.push(i);
                    continue;
                }
                members.sort_unstable();
                let indexes: Vec<u64> = members.iter().map(|m| m.0).collect();
                let Some(rotated) = dbg_rotation(&indexes) else {
                    let (dir, prefix, suffix) = key;
                    let pattern = Path::new(&dir).join(format!("{prefix}N{suffix}"));
                    return Err(WrapSetError { pattern: pattern.display().to_string(), indexes });
                };
                order.extend(members[rotated..].iter().chain(&members[..rotated]).map(|m| m.1));
            }
            None if split(paths[i].as_ref()).is_none() => order.push(i),
            // A later member of a set already placed.
            None => {}
        }
    }
    Ok(order)
}

/// Where reading starts among a set's sorted indexes, if dbg reads them.
fn dbg_rotation(indexes: &[u64]) -> Option<usize> {
    let first = *indexes.first()?;
    if first > 1 {
        return None;
    }
    let mut gap = None;
    for (i, pair) in indexes.windows(2).enumerate() {
        match pair[1] - pair[0] {
            1 => {}
            2 if first == 0 && gap.is_none() => gap = Some(i + 1),
            _ => return None,
        }
    }
    Some(gap.unwrap_or(0))
}

/// The set a file name belongs to (its directory, and its name before and
/// after the last run of digits) and its index there.
fn split(path: &Path) -> Option<((String, String, String), u64)> {
    let name = path.file_name()?.to_str()?;
    let end = name.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = name[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    let index = name[start..end].parse().ok()?;
    let dir = path.parent().map(|p| p.display().to_string()).unwrap_or_default();
    Some(((dir, name[..start].to_owned(), name[end..].to_owned()), index))
}
