//! `WireCode`: what a run of machine code passes is, entry by entry, what
//! the wire program's usual path decides ([`WireProgram::decide`]), its
//! matches written down in order; and it reads nothing past the bytes it
//! is given.

use matchspec::etf;
use matchspec::spec::Kind;
use matchspec::term::Term;
use matchspec::wire::{Layout, RunMatch, RunPassed, Verdict, WireProgram};
use matchspec::{CompiledSpec, Config, Scratch};
use matchspec_jit::WireCode;

const SPECS: &[&str] = &[
    "[{{event, '$1', '$2', delete, '$3'}, [{'>=', '$3', 5000}], ['$1']}]",
    "[{{event, '$1', '$2', delete, '$3'}, [{'>=', '$3', 5000}], ['$_']}]",
    "[{{event, '_', '_', '_', '$1'}, [{'<', '$1', 0}], ['$1']}]",
    "[{{'$1', ok}, [], ['$1']}]",
    "[{{'$1', '$2'}, [{'=:=', '$2', 300}], ['$2']}]",
    "[{{'$1', '$2'}, [{'/=', '$2', 7}], ['$1']}]",
    "[{{a_rather_long_tag, '$1'}, [], ['$1']}]",
    "[{{'$1', [], ''}, [], ['$1']}]",
    "[{{x, '$1', '$2'}, [{'>', '$1', '$2'}], ['$1']}]",
    "[{{e, '$1', y}, [], [{{'$1'}}]}]",
    "[{{'$1', 'déjà'}, [], ['$1']}]",
];

/// Elements of every kind the code measures itself (integers of both
/// encodings and signs, atoms of 0 to 8 bytes, `[]`) and of kinds it does
/// not (longer or non-ASCII atoms, strings, lists, tuples, floats).
const TERMS: &[&str] = &[
    "{event, 1, user_1, delete, 5000}",
    "{event, 2, user_22, delete, 4999}",
    "{event, 300, u, get, 9000}",
    "{event, -3, user_3, delete, 70000}",
    "{event, 4, '', delete, 255}",
    "{event, 5, user_5, delete, -1}",
    "{event, 6, abcdefgh, delete, 6000}",
    "{event, 7, abcdefghi, delete, 6000}",
    "{event, 8, 'déjà', delete, 6000}",
    "{event, 9, [], delete, 6000}",
    "{event, 10, \"s\", delete, 6000}",
    "{event, 11, user_1, delete, 1.5}",
    "{event, 12, user_1, delete, 99999999999}",
    "{event, 13, user_1, delete}",
    "{event, 14, user_1, 'delete', 5001, extra}",
    "{other, 15, user_1, delete, 5001}",
    "{7, ok}",
    "{7, no}",
    "{[1], ok}",
    "{ok, 300}",
    "{ok, 7}",
    "{ok, 8}",
    "{a_rather_long_tag, 1}",
    "{a_rather_long_tax, 1}",
    "{1, [], ''}",
    "{2, [], a}",
    "{x, 5, 3}",
    "{x, 3, 5}",
    "{e, 1, y}",
    "{e, 2, yy}",
    "{1, 'déjà'}",
    "{event, 16, user_1, delete, 5002}",
];

fn compile(spec: &str) -> (WireProgram, WireProgram) {
    let spec = CompiledSpec::compile(spec, Kind::Table, &Config::default()).expect("spec");
    let plain = spec.wire().expect("a table spec").clone();
    let coded = WireCode::attach(&plain);
    assert!(coded.has_scan_code(), "{spec:?} has code");
    (plain, coded)
}

/// Every layout the code reads: terms one after another, after a length
/// of each width, and after a lead byte.
const LAYOUTS: [Layout; 7] = [
    Layout::ADJACENT,
    Layout::prefixed(1),
    Layout::prefixed(2),
    Layout::prefixed(4),
    Layout { lead: Some(0), length_bytes: 4 },
    Layout { lead: Some(7), length_bytes: 2 },
    Layout { lead: Some(0), length_bytes: 0 },
];

/// `term` laid out as `layout` (its length must fit the layout's width).
fn framed(term: &[u8], layout: Layout) -> Vec<u8> {
    let width = usize::from(layout.length_bytes);
    let len = (term.len() as u64).to_be_bytes();
    assert!(width == 0 || term.len() >> (8 * width) == 0, "{} bytes fit {width}", term.len());
    [layout.lead.as_slice(), &len[8 - width..], term].concat()
}

/// The entry at the start of `bytes` as the usual path reads it: its
/// prefix's length, its whole length and its verdict, if whole.
fn usual(plain: &WireProgram, bytes: &[u8], layout: Layout) -> Option<(usize, usize, Verdict)> {
    let mut scratch = Scratch::new();
    if layout.lead.is_some() && bytes.first() != layout.lead.as_ref() {
        return None;
    }
    let prefix = layout.prefix_len();
    let rest = bytes.get(prefix..)?;
    if layout.length_bytes == 0 {
        let (len, verdict) = plain.decide_first(rest, &mut scratch)?;
        return Some((prefix, prefix + len, verdict));
    }
    let field = bytes.get(prefix - usize::from(layout.length_bytes)..prefix)?;
    let len = field.iter().fold(0, |len, &byte| len << 8 | usize::from(byte));
    let term = rest.get(..len)?;
    Some((prefix, prefix + len, plain.decide(term, &mut scratch)))
}

/// Checks one run over `bytes`: every entry it passed is one the usual
/// path rejects or matches, its matches in order. Returns what it passed.
fn check_run(
    plain: &WireProgram,
    bytes: &[u8],
    layout: Layout,
    run: RunPassed,
    matches: &[RunMatch],
    what: &str,
) {
    let mut at = 0;
    let mut expected = Vec::new();
    for before in 0..run.entries {
        let (prefix, len, verdict) = usual(plain, &bytes[at..], layout)
            .unwrap_or_else(|| panic!("{what}: passed entry {before} is not whole"));
        match verdict {
            Verdict::NoMatch => {}
            Verdict::Match { result } => expected.push(RunMatch {
                before,
                entry: at as u64,
                term: (at + prefix) as u64,
                len: (len - prefix) as u64,
                result: result as u64,
            }),
            Verdict::Run | Verdict::Decode => {
                panic!("{what}: passed entry {before}, which needs decoding")
            }
        }
        at += len;
    }
    assert_eq!(run.bytes, at, "{what}: bytes passed");
    assert_eq!(&matches[..run.matches], expected, "{what}: matches");
}

/// Passes a whole stream as a reader does: a run, then one entry read the
/// usual way where it stopped, and so on. Returns how many entries the
/// code passed.
fn pass_stream(
    plain: &WireProgram,
    coded: &WireProgram,
    bytes: &[u8],
    layout: Layout,
    room: usize,
    what: &str,
) -> u64 {
    let mut matches = vec![RunMatch::default(); room];
    let (mut at, mut by_code) = (0, 0);
    while at < bytes.len() {
        let run = coded.pass(&bytes[at..], layout, usize::MAX, u64::MAX, &mut matches);
        check_run(plain, &bytes[at..], layout, run, &matches, what);
        by_code += run.entries;
        at += run.bytes;
        match usual(plain, &bytes[at..], layout) {
            Some((_, len, _)) => at += len,
            None => break,
        }
    }
    by_code
}

#[test]
fn runs_pass_what_the_usual_path_decides() {
    for spec in SPECS {
        let (plain, coded) = compile(spec);
        for layout in LAYOUTS {
            // Each term many times over, in an order that mixes them.
            let mut bytes = Vec::new();
            for i in 0..TERMS.len() * 8 {
                let term = Term::parse(TERMS[(i * 7) % TERMS.len()]).expect("term");
                bytes.extend(framed(&etf::encode(term.as_ref()).expect("encodes"), layout));
            }
            for room in [1, 3, 64] {
                let what = format!("{spec} {layout:?}, room for {room}");
                let by_code = pass_stream(&plain, &coded, &bytes, layout, room, &what);
                assert!(by_code > 0, "{what}: the code passed nothing");
            }
        }
    }
}

#[test]
fn damaged_entries_are_never_passed_unless_the_usual_path_decides_them() {
    for spec in &SPECS[..4] {
        let (plain, coded) = compile(spec);
        for term in TERMS {
            let term = etf::encode(Term::parse(term).expect("term").as_ref()).expect("encodes");
            let mut variants = Vec::new();
            for at in 0..term.len() {
                for byte in [0, 1, 97, 98, 104, 106, 119, 255, term[at] ^ 0x80] {
                    let mut changed = term.clone();
                    changed[at] = byte;
                    variants.push(changed);
                }
                variants.push(term[..at].to_vec());
            }
            for layout in LAYOUTS {
                // Each variant between good entries, with room to read on.
                for variant in &variants {
                    let mut bytes = framed(&term, layout);
                    bytes.extend(framed(variant, layout));
                    bytes.extend(framed(&term, layout).repeat(8));
                    let what = format!("{spec} {layout:?} {variant:?}");
                    pass_stream(&plain, &coded, &bytes, layout, 4, &what);
                }
            }
        }
    }
}

#[test]
fn a_run_stops_at_its_limits() {
    let (plain, coded) = compile(SPECS[0]);
    let term = etf::encode(Term::parse(TERMS[0]).expect("term").as_ref()).expect("encodes");
    let rejected = etf::encode(Term::parse(TERMS[1]).expect("term").as_ref()).expect("encodes");
    let layout = Layout::prefixed(4);
    let mut bytes = Vec::new();
    for i in 0..40 {
        bytes.extend(framed(if i % 4 == 0 { &term } else { &rejected }, layout));
    }
    let mut matches = [RunMatch::default(); 64];
    // At most `most` entries.
    let run = coded.pass(&bytes, layout, usize::MAX, 5, &mut matches);
    assert_eq!((run.entries, run.matches), (5, 2));
    check_run(&plain, &bytes, layout, run, &matches, "most 5");
    // At most as many matches as there is room for: it stops once full.
    let run = coded.pass(&bytes, layout, usize::MAX, u64::MAX, &mut matches[..3]);
    assert_eq!((run.entries, run.matches), (9, 3));
    check_run(&plain, &bytes, layout, run, &matches, "room for 3");
    // No entry longer than the limit (its prefix included).
    let run = coded.pass(&bytes, layout, term.len() + 3, u64::MAX, &mut matches);
    assert_eq!(run.entries, 0);
    let longest = term.len().max(rejected.len());
    let run = coded.pass(&bytes, layout, longest + 4, u64::MAX, &mut matches);
    // All but the last, which leaves too few bytes after its term's start
    // for reads unchecked: the usual path reads it.
    assert_eq!(run.entries, 39);
    check_run(&plain, &bytes, layout, run, &matches, "within the limit");
}

/// `bytes` copied to the very end of a readable page, with an unreadable
/// page after it: a read past them faults.
struct Guarded {
    region: region::Allocation,
    len: usize,
}

impl Guarded {
    fn new(bytes: &[u8]) -> Guarded {
        let page = region::page::size();
        let pages = bytes.len().div_ceil(page) + 1;
        let mut region =
            region::alloc(pages * page, region::Protection::READ_WRITE).expect("pages");
        let base = region.as_mut_ptr::<u8>();
        let start = (pages - 1) * page - bytes.len();
        // SAFETY: `start + bytes.len()` is within the allocation, which is
        // writable, and `bytes` is not in it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(start), bytes.len()) };
        // SAFETY: the last page of the allocation, which nothing refers to.
        unsafe { region::protect(base.add((pages - 1) * page), page, region::Protection::NONE) }
            .expect("guard page");
        Guarded { region, len: bytes.len() }
    }

    fn bytes(&self) -> &[u8] {
        let page = region::page::size();
        let pages = self.region.len() / page;
        let start = (pages - 1) * page - self.len;
        // SAFETY: the readable bytes copied in `new`, alive with `self`.
        unsafe { std::slice::from_raw_parts(self.region.as_ptr::<u8>().add(start), self.len) }
    }
}

#[test]
fn a_run_reads_nothing_past_its_bytes() {
    // Entries up to the very last byte before an unreadable page, every
    // one of them cut short in turn: a read past the end would fault.
    for spec in SPECS {
        let (_, coded) = compile(spec);
        for layout in LAYOUTS {
            let mut bytes = Vec::new();
            for term in TERMS {
                let term = Term::parse(term).expect("term");
                bytes.extend(framed(&etf::encode(term.as_ref()).expect("encodes"), layout));
            }
            let mut matches = [RunMatch::default(); 64];
            for end in 0..=bytes.len() {
                let guarded = Guarded::new(&bytes[..end]);
                for start in (0..end).step_by(3) {
                    let run = coded.pass(
                        &guarded.bytes()[start..],
                        layout,
                        usize::MAX,
                        u64::MAX,
                        &mut matches,
                    );
                    assert!(run.bytes <= end - start);
                }
            }
        }
    }
}

#[test]
fn an_entry_with_another_lead_is_left_to_the_usual_path() {
    let (_, coded) = compile(SPECS[0]);
    let term = etf::encode(Term::parse(TERMS[0]).expect("term").as_ref()).expect("encodes");
    let mut matches = [RunMatch::default(); 4];
    for layout in LAYOUTS.into_iter().filter(|layout| layout.lead.is_some()) {
        let good = framed(&term, layout);
        let mut bytes = good.repeat(2);
        bytes[good.len()] ^= 1;
        bytes.extend(good.repeat(2));
        let run = coded.pass(&bytes, layout, usize::MAX, u64::MAX, &mut matches);
        assert_eq!((run.entries, run.bytes), (1, good.len()), "{layout:?}");
    }
    for layout in LAYOUTS {
        let run = coded.pass(&[], layout, usize::MAX, u64::MAX, &mut matches);
        assert_eq!(run, RunPassed::default(), "nothing to pass in {layout:?}");
    }
}
