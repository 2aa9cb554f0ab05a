//! [`Framing::detect`]: what the first bytes of an input say it is, and
//! [`Looks`], the same said to a person whose input is not what they said.

use std::fmt;

use super::Framing;

/// The version byte every external term format term starts with.
const VERSION: u8 = 131;

impl Framing {
    /// The framing the first bytes of an input (`start`, as many as are at
    /// hand) say, or `None` for text. Concatenated terms start with the
    /// version byte 131; a dbg trace file with a message entry (0, a 4-byte
    /// length, then 131). `{packet, N}` framing has no mark of its own, so
    /// it is taken only where nothing else reads the bytes so: a length of
    /// two bytes at least, then 131, and where the bytes reach it, the next
    /// entry's length and 131 again (or the end of the bytes at hand).
    /// Text never starts so: its first byte is not 131, and 131 is not
    /// where UTF-8 text of the characters a term is written in has it.
    ///
    /// ```
    /// use msc::stream::Framing;
    ///
    /// assert_eq!(Framing::detect(&[131, 97, 1]), Some(Framing::Concatenated));
    /// assert_eq!(Framing::detect(&[0, 0, 0, 2, 131, 106, 0, 0, 0, 2, 131, 106]), Some(Framing::Packet4));
    /// assert_eq!(Framing::detect(&[0, 0, 0, 0, 2, 131, 106]), Some(Framing::DbgTrace));
    /// assert_eq!(Framing::detect(&[2, 131, 106, 2, 131, 106]), Some(Framing::Packet1));
    /// assert_eq!(Framing::detect(b"{ok, 1}."), None);
    /// ```
    pub fn detect(start: &[u8]) -> Option<Framing> {
        match start {
            [VERSION, ..] => return Some(Framing::Concatenated),
            [0, _, _, _, _, VERSION, ..] => return Some(Framing::DbgTrace),
            _ => {}
        }
        // The framing the bytes bear out best (the longer prefix first).
        let framings = [Framing::Packet4, Framing::Packet2, Framing::Packet1];
        let (evidence, framing) = framings
            .into_iter()
            .map(|framing| (evidence(start, framing.prefix()), framing))
            .rev()
            .max_by_key(|&(evidence, _)| evidence)?;
        (evidence != Evidence::None).then_some(framing)
    }
}

/// How far the bytes bear out a framing, least first.
/// What the start of an input looks like: for an error about an input
/// read as one format that looks like another.
///
/// ```
/// use msc::stream::{Framing, Looks};
///
/// assert_eq!(Looks::at(b"{event, 1}.\n"), Looks::Text);
/// assert_eq!(Looks::at(&[131, 97, 7]), Looks::Framed(Framing::Concatenated));
/// assert_eq!(Looks::at(&[0, 0, 0, 3, 131, 97, 7]).to_string(), "{packet, 4} entries");
/// assert_eq!(Looks::at(&[0xff, 0xfe, 7]), Looks::Other);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Looks {
    /// Encoded terms, framed so ([`Framing::detect`]).
    Framed(Framing),
    /// UTF-8 text (as far as it goes: the bytes may end inside a
    /// character).
    Text,
    /// None of the input formats.
    Other,
}

impl Looks {
    /// What `start`, the first bytes of an input, looks like.
    pub fn at(start: &[u8]) -> Looks {
        if let Some(framing) = Framing::detect(start) {
            return Looks::Framed(framing);
        }
        match std::str::from_utf8(start) {
            Ok(_) => Looks::Text,
            // Cut inside a character at the end: still text.
            Err(err) if err.error_len().is_none() => Looks::Text,
            Err(_) => Looks::Other,
        }
    }
}

impl fmt::Display for Looks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Looks::Framed(Framing::Concatenated) => f.write_str("external term format terms"),
            Looks::Framed(Framing::Packet1) => f.write_str("{packet, 1} entries"),
            Looks::Framed(Framing::Packet2) => f.write_str("{packet, 2} entries"),
            Looks::Framed(Framing::Packet4) => f.write_str("{packet, 4} entries"),
            Looks::Framed(Framing::DbgTrace) => f.write_str("a dbg trace file"),
            Looks::Text => f.write_str("term text"),
            Looks::Other => f.write_str("none of the input formats"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Evidence {
    /// Its first entry's length is not one of a term, or 131 does not
    /// follow.
    None,
    /// The first entry's header is one, but the entry goes past the bytes.
    Header,
    /// The first entry ends within the bytes, and they end there or the
    /// next entry's header is not all at hand.
    Entry,
    /// The next entry's header is one too.
    Twice,
}

/// How far `start` bears out entries after `prefix`-byte lengths: a
/// length of two bytes at least (a term is), then 131; and the next.
fn evidence(start: &[u8], prefix: usize) -> Evidence {
    let entry = |at: usize| -> Option<usize> {
        let len = start.get(at..at + prefix)?.iter().fold(0usize, |n, &b| n << 8 | usize::from(b));
        (len >= 2 && start.get(at + prefix) == Some(&VERSION)).then_some(at + prefix + len)
    };
    match entry(0) {
        None => Evidence::None,
        Some(next) if next > start.len() => Evidence::Header,
        // The next entry's header, if at hand.
        Some(next) if next + prefix < start.len() => match entry(next) {
            Some(_) => Evidence::Twice,
            None => Evidence::None,
        },
        Some(_) => Evidence::Entry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(prefix: usize, terms: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for term in terms {
            out.extend(&(term.len() as u32).to_be_bytes()[4 - prefix..]);
            out.extend(*term);
        }
        out
    }

    #[test]
    fn each_framing_is_told_from_its_first_entries() {
        let terms: &[&[u8]] = &[&[131, 97, 7], &[131, 104, 1, 106]];
        for (prefix, framing) in
            [(1, Framing::Packet1), (2, Framing::Packet2), (4, Framing::Packet4)]
        {
            let bytes = framed(prefix, terms);
            assert_eq!(Framing::detect(&bytes), Some(framing), "{bytes:?}");
            // Only the first entry at hand.
            assert_eq!(Framing::detect(&bytes[..prefix + 3]), Some(framing));
        }
        let mut dbg = vec![0];
        dbg.extend(framed(4, &terms[..1]));
        assert_eq!(Framing::detect(&dbg), Some(Framing::DbgTrace));
        assert_eq!(Framing::detect(&[131, 106]), Some(Framing::Concatenated));
    }

    #[test]
    fn text_and_broken_framing_are_not_packets() {
        for bytes in [
            &b"{event, 1}."[..],
            b"[1, 2].\n",
            "{'é', 1}.".as_bytes(),
            // A length of 0 or 1 cannot hold a term.
            &[0, 0, 0, 0, 131, 106],
            &[1, 131],
            // The second entry's length does not lead to a term.
            &[0, 0, 0, 2, 131, 106, 0, 0, 0, 2, 7, 106],
            &[],
        ] {
            assert_eq!(Framing::detect(bytes), None, "{bytes:?}");
        }
    }
}
