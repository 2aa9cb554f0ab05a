//! `matchspec::wire` and the byte engine against decoding first: a rejection
//! or a match on the wire (and the part of the input it names as the
//! result) must be the interpreter's answer on the decoded term, for every
//! encoding of it and for bytes that do not decode.

use matchspec::encoded::built::EncodedOutcome;
use matchspec::etf;
use matchspec::spec::Kind;
use matchspec::term::{Heap, Term};
use matchspec::wire::{Verdict, WireProgram};
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use msc_testkit::encodings::variants;

/// The tags the hand-made bytes below use.
mod tag {
    pub const INTEGER_EXT: u8 = 98;
    pub const SMALL_TUPLE_EXT: u8 = 104;
    pub const SMALL_ATOM_UTF8_EXT: u8 = 119;
}

const SPECS: &[&str] = &[
    "[{{'$1', no}, [], ['$1']}]",
    "[{{'$1', '$2', ok}, [{'>', '$2', 100}], ['$1']}]",
    "[{{'$1', '$2', '$3'}, [{is_atom, '$1'}, {is_integer, '$2'}, {'>=', '$2', 10}, {'=<', '$2', 190}], [{{'$1', '$2'}}]}]",
    "[{{a, {b, '$1', [c | '$2']}, '_'}, [{is_list, '$2'}], ['$2']}, {{a, {b, '$1', '_'}, #{k => '$3'}}, [{is_integer, '$3'}], [{{'$1', '$3'}}]}]",
    "[{{'$1', '$1'}, [], [same]}, {{'$1', []}, [], [nil]}, {{'_', 7}, [], [seven]}]",
    "[{{event, '$1', '_', delete, '$2'}, [{'>', '$2', 100}], ['$1']}]",
    "[{{'$1', '$2'}, [{'==', '$1', héllo}], ['$2']}, {{'$1', '$2'}, [{'=/=', '$1', '$2'}, {'<', '$2', -3}], [lt]}]",
    "[{{'$1'}, [{is_float, '$1'}], [float]}, {{'$1'}, [{is_binary, '$1'}], [bin]}, {{'$1'}, [{is_boolean, '$1'}], [bool]}, {{'$1'}, [{is_tuple, '$1'}], [tuple]}, {{'$1'}, [{is_map, '$1'}], [map]}]",
    "[{[a | '_'], [], [list]}, {\"ab\", [], [string]}, {'$1', [{'>', '$1', 5}], [big]}]",
    "[{'_', [], [any]}]",
    "[{{'$1', []}, [], [nil]}]",
    "[{{'_', 7}, [], [seven]}]",
    "[{{'$1', '$2'}, [{'==', '$1', héllo}], ['$2']}]",
    "[{{q, '$1'}, [{'=:=', '$1', q}], [qq]}]",
    "[{{'$1'}, [{is_boolean, '$1'}], [bool]}]",
    "[{{'$1', '$2'}, [{'<', '$1', '$2'}], [lt]}]",
    "[{{'$1', no}, [{is_pid, '$1'}], [pid]}]",
    "[{{trace, '$1', call, {lists, '$2', '_'}}, [], [{{'$1', '$2'}}]}]",
    "[{{'$1', 7}, [{is_map, '$1'}], [map]}, {{#{a => '$1'}, '_'}, [], ['$1']}]",
    "[{{'$1', '_'}, [{is_bitstring, '$1'}, {'>', {byte_size, '$1'}, 1}], [{{{byte_size, '$1'}, {bit_size, '$1'}, {is_binary, '$1'}}}]}]",
    "[{{'$1', '$2'}, [{'>', '$1', 1000}], [{{'$1', {'+', '$2', 1}}}]}, {{'$1', '$1'}, [], [same]}]",
    "[{{#{<<\"k\">> => '$1'}, '_'}, [], ['$1']}, {{'$1', '$2'}, [{'=:=', '$1', <<\"k\">>}, {'==', '$2', 7.0}], [seven]}]",
    "[{{'$1', '$2'}, [{'<', '$1', '$2'}, {'=/=', '$1', '$2'}], [{length, '$2'}]}, {'$1', [{'==', {tuple_size, '$1'}, 2}], [{element, 2, '$1'}]}]",
    // A guard function's value in a temporary that held a part of the
    // head (the nested tuple), as benches/stream's real_project has it.
    "[{{error, '$1', {'$2', '$3'}}, [{'>', {byte_size, '$3'}, 30}], [{{'$1', '$2', {byte_size, '$3'}}}]}]",
];

const TERMS: &[&str] = &[
    "{1, no}",
    "{2, ok}",
    "{x, no}",
    "{1, no, extra}",
    "no",
    "[]",
    "{}",
    "{user_7, 150, ok}",
    "{user_7, 50, ok}",
    "{user_7, 150, error}",
    "{\"s\", 300, ok}",
    "{alpha, 42, get}",
    "{42, 42, get}",
    "{beta, 3.5, put}",
    "{gamma, 200, put}",
    "{a, {b, 1, [c, 1, 2]}, x}",
    "{a, {b, 2, [d]}, #{k => 2}}",
    "{a, {x, 3}, y}",
    "{a, {b, 1, [c | tail]}, x}",
    "{q, q}",
    "{q, r}",
    "{[1], [1]}",
    "{z, []}",
    "{z, \"\"}",
    "{z, 7}",
    "{z, 8}",
    "{event, 1, user_1, delete, 500}",
    "{event, 2, user_2, get, 500}",
    "{event, 3, user_3, delete, 5}",
    "{héllo, 1}",
    "{hello, 2}",
    "{x, -5}",
    "{x, -2}",
    "{-70000, -70000}",
    "{2147483647, -2147483648}",
    "{1.5}",
    "{<<\"b\">>}",
    "{true}",
    "{perhaps}",
    "{{}}",
    "{#{}}",
    "{1099511627776}",
    "{self}",
    "[a, b]",
    "[b]",
    "\"ab\"",
    "\"abc\"",
    "6",
    "5",
    "4.0",
    "<<1,2>>",
    "-1",
    "{event, 9, user_9, delete, 123456789012}",
    "{f, fun erlang:abs/1}",
    "{<0.5.0>, no}",
    "{trace, <0.80.0>, call, {lists, reverse, [[1, 2]]}}",
    "{123456789012345678901234567890, 5}",
    "{-123456789012345678901234567890, [a, b | c]}",
    "{<<1:3>>, x}",
    "{<<1, 2, 3:4>>, 7}",
    "{<<1, 2>>, 7.0}",
    "{#{<<\"k\">> => 1}, 7}",
    "{#{<<\"k\">> => 1, <<\"j\">> => 2}, 7}",
    "{<<\"k\">>, 7}",
    "{1001, 2}",
    "{1001, 2.5}",
    "{[], []}",
    "{\"abc\", \"abd\"}",
    "{error, 2, {closed, <<\"upstream service \">>}}",
    "{error, 3, {closed, <<\"upstream service did not answer in time\">>}}",
];

fn compile(spec: &str) -> (CompiledSpec, WireProgram) {
    let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
    let wire = compiled.wire().unwrap().clone();
    (compiled, wire)
}

/// Checks one encoding; returns whether the wire decided it alone.
fn agrees(spec: &CompiledSpec, wire: &WireProgram, bytes: &[u8], scratch: &mut Scratch) -> bool {
    let verdict = wire.decide(bytes, scratch);
    if verdict == Verdict::Decode {
        return false;
    }
    let term = etf::decode(bytes).unwrap_or_else(|err| {
        panic!("decided on the wire ({verdict:?}) but does not decode ({err}): {bytes:?}")
    });
    let mut scratch = Scratch::new();
    let outcome = spec.run(term.as_ref(), &mut scratch, &mut TestHost::default()).unwrap();
    match verdict {
        Verdict::Match { result } => {
            let mut heap = Heap::new();
            let part = etf::decode_subterm(bytes, result, &mut heap).unwrap_or_else(|err| {
                panic!("a match's result at {result} does not decode ({err}): {bytes:?}")
            });
            let expected = outcome
                .result()
                .unwrap_or_else(|| panic!("matched on the wire, rejected by {spec:?}: {term}"));
            assert_eq!(heap.view(part), expected, "the result of {spec:?} on {term}");
        }
        Verdict::Run => {
            let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
            let on_bytes = spec
                .run_verdict(bytes, verdict, &mut heap, &mut scratch, &mut TestHost::default())
                .unwrap_or_else(|err| panic!("a plain term does not decode ({err}): {bytes:?}"))
                .unwrap();
            assert_eq!(on_bytes, outcome, "{spec:?} on the bytes of {term}: {bytes:?}");
        }
        Verdict::NoMatch | Verdict::Decode => assert_eq!(
            outcome,
            Outcome::NoMatch,
            "rejected on the wire, matched by {spec:?}: {term}"
        ),
    }
    built_agrees(spec, bytes, verdict, &outcome, &term);
    true
}

/// The result left in the bytes ([`Run::run_verdict_built`]) is the
/// decoded run's: as a term, printed, and encoded.
fn built_agrees(
    spec: &CompiledSpec,
    bytes: &[u8],
    verdict: Verdict,
    outcome: &Outcome<'_>,
    term: &Term,
) {
    let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
    let built = spec
        .run_verdict_built(bytes, verdict, &mut heap, &mut scratch, &mut TestHost::default())
        .unwrap_or_else(|err| panic!("a plain term does not decode ({err}): {bytes:?}"))
        .unwrap();
    let context = || format!("{spec:?} on the bytes of {term}: {bytes:?}");
    let built = match built {
        EncodedOutcome::Outcome(on_bytes) => {
            assert_eq!(&on_bytes, outcome, "{}", context());
            return;
        }
        EncodedOutcome::Built(built) => built,
    };
    let expected = outcome.result().unwrap_or_else(|| panic!("built a result: {}", context()));
    assert_eq!(built.to_term().unwrap().as_ref(), expected, "{}", context());
    let mut text = String::new();
    built.write_text(&mut text).unwrap();
    assert_eq!(text, expected.to_string(), "{}", context());
    let mut encoded = vec![7];
    built.write_etf(&mut encoded).unwrap();
    assert_eq!(encoded[0], 7, "appended");
    let decoded = etf::decode(&encoded[1..]).unwrap_or_else(|err| panic!("{err}: {}", context()));
    assert_eq!(decoded.as_ref(), expected, "{}", context());
}

#[test]
fn rejections_are_the_interpreters_on_every_encoding() {
    let mut scratch = Scratch::new();
    let mut decided = 0;
    let mut checked = 0;
    for spec in SPECS {
        let (compiled, wire) = compile(spec);
        for text in TERMS {
            let bytes = etf::encode(Term::parse(text).unwrap().as_ref()).unwrap();
            for variant in variants(&bytes) {
                checked += 1;
                decided += usize::from(agrees(&compiled, &wire, &variant, &mut scratch));
            }
        }
    }
    // The wire must actually decide most rejections, or this tests nothing.
    assert!(decided > checked / 3, "decided {decided} of {checked}");
}

/// Terms of tuples over a pool of elements near the specs' constants.
fn random_terms(count: usize) -> Vec<Term> {
    const POOL: &[&str] = &[
        "no",
        "ok",
        "delete",
        "get",
        "a",
        "b",
        "c",
        "q",
        "z",
        "x",
        "event",
        "user_1",
        "héllo",
        "hello",
        "true",
        "false",
        "-3",
        "-2",
        "0",
        "5",
        "6",
        "7",
        "8",
        "9",
        "10",
        "100",
        "101",
        "189",
        "190",
        "191",
        "500",
        "-70000",
        "[]",
        "\"\"",
        "\"ab\"",
        "[c, 1]",
        "[c | t]",
        "[a]",
        "1.5",
        "7.0",
        "<<\"b\">>",
        "{b, 1, [c]}",
        "{b, 1, x}",
        "{}",
        "#{k => 1}",
        "-2147483648",
        "2147483647",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    };
    (0..count)
        .map(|_| {
            let arity = next(6);
            let elements: Vec<&str> = (0..arity).map(|_| POOL[next(POOL.len())]).collect();
            let text = match next(8) {
                0 => POOL[next(POOL.len())].to_owned(),
                1 => format!("[{}]", elements.join(", ")),
                _ => format!("{{{}}}", elements.join(", ")),
            };
            Term::parse(&text).unwrap()
        })
        .collect()
}

#[test]
fn random_terms_agree() {
    let mut scratch = Scratch::new();
    let terms = random_terms(3000);
    let (mut decided, mut checked) = (0, 0);
    for spec in SPECS {
        let (compiled, wire) = compile(spec);
        for term in &terms {
            let bytes = etf::encode(term.as_ref()).unwrap();
            for variant in variants(&bytes) {
                checked += 1;
                decided += usize::from(agrees(&compiled, &wire, &variant, &mut scratch));
            }
        }
    }
    assert!(decided > checked / 3, "decided {decided} of {checked}");
}

/// Encodings no encoder writes but every decoder reads.
#[test]
fn odd_encodings_agree() {
    let odd: &[&[u8]] = &[
        // {z, ""} with the string as an empty STRING_EXT.
        &[131, 104, 2, 119, 1, b'z', 107, 0, 0],
        // {z, 7} with 7 as an empty LIST_EXT whose tail is 7.
        &[131, 104, 2, 119, 1, b'z', 108, 0, 0, 0, 0, 97, 7],
        // {z, 7} with 7 as a SMALL_BIG_EXT.
        &[131, 104, 2, 119, 1, b'z', 110, 1, 0, 7],
        // {1, no} with a Latin-1 SMALL_ATOM_EXT.
        &[131, 104, 2, 97, 1, 115, 2, b'n', b'o'],
        // {héllo, 1} in Latin-1 and in UTF-8.
        &[131, 104, 2, 100, 0, 5, b'h', 0xe9, b'l', b'l', b'o', 97, 1],
        &[131, 104, 2, 119, 6, b'h', 0xc3, 0xa9, b'l', b'l', b'o', 97, 1],
        // {q, q} with the atoms encoded two ways.
        &[131, 104, 2, 100, 0, 1, b'q', 119, 1, b'q'],
        // {<0.5.0>, no} with the old PID_EXT, and with a creation too big for it.
        &[
            131, 104, 2, 103, 119, 13, b'n', b'o', b'n', b'o', b'd', b'e', b'@', b'n', b'o', b'h',
            b'o', b's', b't', 0, 0, 0, 5, 0, 0, 0, 0, 0, 119, 2, b'n', b'o',
        ],
        &[
            131, 104, 2, 103, 119, 13, b'n', b'o', b'n', b'o', b'd', b'e', b'@', b'n', b'o', b'h',
            b'o', b's', b't', 0, 0, 0, 5, 0, 0, 0, 0, 4, 119, 2, b'n', b'o',
        ],
        // A pid of this node whose number is over 28 bits.
        &[
            131, 104, 2, 88, 119, 13, b'n', b'o', b'n', b'o', b'd', b'e', b'@', b'n', b'o', b'h',
            b'o', b's', b't', 0x10, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 119, 2, b'n', b'o',
        ],
        // {#{a => 1, a => 2}}: duplicate keys, in two atom encodings too.
        &[131, 104, 1, 116, 0, 0, 0, 2, 119, 1, b'a', 97, 1, 119, 1, b'a', 97, 2],
        &[131, 104, 1, 116, 0, 0, 0, 2, 100, 0, 1, b'a', 97, 1, 119, 1, b'a', 97, 2],
        // {#{1 => a, 1 => b}} with the key in two integer encodings.
        &[131, 104, 1, 116, 0, 0, 0, 2, 97, 1, 119, 1, b'a', 98, 0, 0, 0, 1, 119, 1, b'b'],
        // {#{1 => a, 2 => b}}, fine, and {#{'é' => 1}}, a key not ASCII.
        &[131, 104, 1, 116, 0, 0, 0, 2, 97, 1, 119, 1, b'a', 98, 0, 0, 0, 2, 119, 1, b'b'],
        &[131, 104, 1, 116, 0, 0, 0, 1, 119, 2, 0xc3, 0xa9, 97, 1],
        // A float that is not finite.
        &[131, 104, 1, 70, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0],
        // {[], ""}: `[]` twice, the second an empty STRING_EXT.
        &[131, 104, 2, 106, 107, 0, 0],
        // {<<1,2>>, <<1,2>>}, the second a BIT_BINARY_EXT of 8 bits.
        &[131, 104, 2, 109, 0, 0, 0, 2, 1, 2, 77, 0, 0, 0, 2, 8, 1, 2],
        // {7, 7}, the second a SMALL_BIG_EXT; and a negative zero bignum.
        &[131, 104, 2, 97, 7, 110, 1, 0, 7],
        &[131, 104, 2, 97, 0, 110, 1, 1, 0],
        // Bitstrings of 0 and 9 bits in the last byte, and of no bytes.
        &[131, 104, 1, 77, 0, 0, 0, 1, 0, 0xff],
        &[131, 104, 1, 77, 0, 0, 0, 1, 9, 0xff],
        &[131, 104, 1, 77, 0, 0, 0, 0, 3],
        // A LARGE_BIG_EXT longer than any the decoder takes.
        &[131, 104, 1, 111, 0, 8, 0, 0, 0, 1, 2, 3],
        // {#{a => 1, a => 2}, abcdefghij}: the duplicate keys with bytes
        // after them (keys are read a word at a time where there are 8).
        &[
            131, 104, 2, 116, 0, 0, 0, 2, 119, 1, b'a', 97, 1, 119, 1, b'a', 97, 2, 119, 10, b'a',
            b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
        ],
        &[
            131, 104, 2, 116, 0, 0, 0, 2, 119, 1, b'a', 97, 1, 100, 0, 1, b'a', 97, 2, 119, 10,
            b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
        ],
        // {#{abcdefgh => 1, abcdefgh => 2}, abcdefghij}: 8 bytes, twice;
        // then abcdefgh and abcdefgi, and a and 'a\0': different keys.
        &[
            131, 104, 2, 116, 0, 0, 0, 2, 119, 8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h',
            97, 1, 115, 8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h', 97, 2, 119, 10, b'a',
            b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
        ],
        &[
            131, 104, 2, 116, 0, 0, 0, 2, 119, 8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h',
            97, 1, 115, 8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'i', 97, 2, 119, 10, b'a',
            b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
        ],
        &[
            131, 104, 2, 116, 0, 0, 0, 2, 119, 1, b'a', 97, 1, 119, 2, b'a', 0, 97, 2, 119, 10,
            b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
        ],
        // {#{<<"k">> => 1, <<"k">> => 2}}: a binary key twice.
        &[131, 104, 1, 116, 0, 0, 0, 2, 109, 0, 0, 0, 1, b'k', 97, 1, 109, 0, 0, 0, 1, b'k', 97, 2],
    ];
    let mut scratch = Scratch::new();
    for spec in SPECS {
        let (compiled, wire) = compile(spec);
        for bytes in odd {
            agrees(&compiled, &wire, bytes, &mut scratch);
        }
    }
}

#[test]
fn damaged_bytes_are_never_rejected_on_the_wire() {
    let mut scratch = Scratch::new();
    for spec in SPECS {
        let (compiled, wire) = compile(spec);
        for text in TERMS {
            let bytes = etf::encode(Term::parse(text).unwrap().as_ref()).unwrap();
            for cut in 0..bytes.len() {
                agrees(&compiled, &wire, &bytes[..cut], &mut scratch);
            }
            let mut longer = bytes.clone();
            longer.push(0);
            agrees(&compiled, &wire, &longer, &mut scratch);
            for i in 0..bytes.len() {
                for value in
                    [0, 1, 0x7f, 0x80, 0xff, bytes[i].wrapping_add(1), bytes[i].wrapping_sub(1)]
                {
                    let mut changed = bytes.clone();
                    changed[i] = value;
                    agrees(&compiled, &wire, &changed, &mut scratch);
                }
            }
        }
    }
}

#[test]
fn a_verdict_is_reached_for_the_common_cases() {
    let mut scratch = Scratch::new();
    let (_, wire) = compile(SPECS[5]);
    let verdict = |text: &str, scratch: &mut Scratch| {
        wire.decide(&etf::encode(Term::parse(text).unwrap().as_ref()).unwrap(), scratch)
    };
    assert_eq!(verdict("{event, 2, user_2, get, 500}", &mut scratch), Verdict::NoMatch);
    assert_eq!(verdict("{event, 3, user_3, delete, 5}", &mut scratch), Verdict::NoMatch);
    // The result, '$1', is the event's second element: after the version
    // byte, the tuple's header (2) and `event` (7).
    assert_eq!(
        verdict("{event, 1, user_1, delete, 500}", &mut scratch),
        Verdict::Match { result: 10 }
    );
    // A bignum the needs do not compare: the byte engine runs.
    assert_eq!(verdict("{event, 1, user_1, delete, 123456789012}", &mut scratch), Verdict::Run);
    // A fun is not plain: the decoder decides.
    assert_eq!(
        verdict("{event, 1, user_1, delete, fun erlang:abs/1}", &mut scratch),
        Verdict::Decode
    );
    assert!(
        WireProgram::lower(
            &CompiledSpec::compile("[{['$1'], [], [true]}]", Kind::Call, &Config::default())
                .unwrap()
                .shared_program()
        )
        .is_none()
    );
}

#[test]
fn variants_decode_to_the_same_term() {
    for text in TERMS {
        let term = Term::parse(text).unwrap();
        let bytes = etf::encode(term.as_ref()).unwrap();
        let all = variants(&bytes);
        for variant in &all {
            let mut heap = Heap::new();
            let word = etf::decode_into(variant, &mut heap).unwrap();
            assert_eq!(heap.view(word).to_string(), term.to_string(), "{variant:?}");
        }
    }
}

#[test]
fn every_byte_of_a_short_atom_is_checked() {
    // The scan reads a short name's bytes in one load: a byte that is not
    // UTF-8, at any place of the name, must still leave the term to the
    // decoder (which refuses it).
    let (_, wire) = compile("[{{'$1', '_', no}, [], ['$1']}]");
    let mut scratch = Scratch::new();
    for len in 1..=10 {
        let term = |name: &[u8]| {
            let mut bytes = vec![131, tag::SMALL_TUPLE_EXT, 3, tag::SMALL_ATOM_UTF8_EXT, len];
            bytes.extend(name);
            bytes.extend([tag::INTEGER_EXT, 0, 0, 1, 0, tag::SMALL_ATOM_UTF8_EXT, 2, b'n', b'o']);
            bytes
        };
        let name = vec![b'a'; usize::from(len)];
        assert_eq!(wire.decide(&term(&name), &mut scratch), Verdict::Match { result: 3 });
        for at in 0..name.len() {
            for bad in [0x80, 0xc3, 0xff] {
                let mut name = name.clone();
                name[at] = bad;
                let bytes = term(&name);
                assert!(etf::decode(&bytes).is_err(), "{bytes:?} decodes");
                assert_eq!(wire.decide(&bytes, &mut scratch), Verdict::Decode, "{bytes:?}");
            }
        }
    }
}

#[test]
fn an_index_from_measuring_gives_the_same_verdicts() {
    // A reader measures each term of a stream with `term_len_indexed`; the
    // wire program then reads the term through that index. Given the index
    // of other bytes, it scans the term itself.
    let mut scratch = Scratch::new();
    let mut index = etf::PlainIndex::new();
    let mut other = etf::PlainIndex::new();
    let (mut indexed, mut decided_first) = (0, 0);
    for spec in SPECS {
        let (_, wire) = compile(spec);
        for (n, text) in TERMS.iter().enumerate() {
            let bytes = etf::encode(Term::parse(text).unwrap().as_ref()).unwrap();
            let mut stream = bytes.clone();
            stream.extend(
                etf::encode(Term::parse(TERMS[(n + 1) % TERMS.len()]).unwrap().as_ref()).unwrap(),
            );
            let len = etf::term_len_indexed(&stream, &mut index).unwrap();
            assert_eq!(len, bytes.len(), "{text}");
            let term = &stream[..len];
            let expected = wire.decide(&bytes, &mut scratch);
            assert_eq!(
                wire.decide_indexed(term, &index, &mut scratch),
                expected,
                "{spec} on {text}"
            );
            // The same bytes elsewhere are not what the index is of.
            etf::term_len_indexed(&stream, &mut other).unwrap();
            assert_eq!(
                wire.decide_indexed(&bytes, &other, &mut scratch),
                expected,
                "{spec} on {text}"
            );
            // Deciding the first term of the stream measures it too.
            if let Some((first, verdict)) = wire.decide_first(&stream, &mut scratch) {
                assert_eq!((first, verdict), (len, expected), "{spec} on {text}");
                decided_first += 1;
            }
            // Nor are other bytes.
            let next = &stream[len..];
            let verdict = wire.decide(next, &mut scratch);
            assert_eq!(
                wire.decide_indexed(next, &index, &mut scratch),
                verdict,
                "{spec} on {text}"
            );
            indexed += usize::from(expected != Verdict::Decode);
        }
    }
    assert!(indexed > 100, "only {indexed} decided");
    assert!(decided_first > 300, "only {decided_first} decided first");
}

#[test]
fn a_cleared_index_is_of_no_bytes() {
    // Bytes replaced in place by others of the same length, with their
    // elements elsewhere: an index of the old ones would misread them, so a
    // reader clears it before it hands out a term it did not measure.
    let (_, wire) = compile("[{{e, '$1', y}, [], ['$1']}]");
    let old = etf::encode(Term::parse("{e, 1, xyzw}").unwrap().as_ref()).unwrap();
    let new = etf::encode(Term::parse("{e, 300, y}").unwrap().as_ref()).unwrap();
    assert_eq!(old.len(), new.len());
    let mut buffer = old.clone();
    let mut index = etf::PlainIndex::new();
    assert_eq!(index.measure(&buffer), Some(old.len()));
    buffer.copy_from_slice(&new);
    let mut scratch = Scratch::new();
    let expected = wire.decide(&new, &mut scratch);
    assert_eq!(expected, Verdict::Match { result: 6 });
    assert_ne!(wire.decide_indexed(&buffer, &index, &mut scratch), expected, "stale");
    index.clear();
    assert_eq!(wire.decide_indexed(&buffer, &index, &mut scratch), expected);
}

/// The terms of every conformance corpus (the cases themselves, specs,
/// inputs and answers), in every encoding the rewrites make, print from
/// their bytes exactly as the term printer prints them decoded.
#[test]
fn the_byte_printer_prints_as_the_term_printer() {
    let mut files = Vec::new();
    for dir in ["conformance", "otp"] {
        for entry in std::fs::read_dir(msc_testkit::testdata(dir)).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "terms") {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    let (mut printed, mut terms) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let Ok(parsed) = matchspec::syntax::parse_terms(&text) else {
            panic!("{} does not parse", file.display())
        };
        for term in parsed {
            terms += 1;
            let Ok(bytes) = etf::encode(term.as_ref()) else { continue };
            let expected = term.to_string();
            for variant in msc_testkit::encodings::variants_in(&bytes, [2, 15]) {
                let mut text = String::new();
                matchspec::encoded::print::write_text(&variant, 1, &mut text).unwrap();
                assert_eq!(text, expected, "{} printed from {variant:?}", file.display());
                printed += 1;
            }
        }
    }
    assert!(terms > 20_000 && printed > terms, "{printed} printings of {terms} terms");
}
