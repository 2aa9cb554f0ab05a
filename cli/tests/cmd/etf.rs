//! `msc etf encode | msc etf decode`: bytes through standard input.

use matchspec::term::Term;

use crate::{msc, msc_with_stdin, temp_file};

const TERMS: &[&str] = &[
    "a",
    "{order, 17, [{apple, 3}, {pear, 1.5}]}",
    "[1, -2, 1180591620717411303424, -1180591620717411303424 | tail]",
    "#{b => <<1, 2, 3>>, a => \"text\", {k} => #{}}",
    "{'Quoted atom', 'é', <<\"bin\">>, <<1:3>>, []}",
];

#[test]
fn encode_then_decode_round_trips() {
    for text in TERMS {
        let canonical = Term::parse(text).expect("a term").to_string();
        for compressed in [false, true] {
            let mut args = vec!["etf", "encode"];
            if compressed {
                args.push("--compressed");
            }
            let encoded = msc_with_stdin(&args, text.as_bytes()).ok();
            assert_eq!(encoded.stdout.first(), Some(&131), "{text}: the version byte");
            if !compressed {
                let term = Term::parse(text).expect("a term");
                let library = matchspec::etf::encode(term.as_ref()).expect("encodable");
                assert_eq!(encoded.stdout, library, "{text}: the CLI encodes as the library");
            }
            let decoded = msc_with_stdin(&["etf", "decode"], &encoded.stdout).ok();
            assert_eq!(
                decoded.out(),
                format!("{canonical}.\n"),
                "{text} (compressed: {compressed})"
            );
        }
    }
}

#[test]
fn files_work_as_well_as_stdin() {
    let text = temp_file("etf_files.term", "{x, [1, 2]}.");
    let encoded = msc(&["etf", "encode", &text]).ok();
    let bytes = temp_file("etf_files.etf", &encoded.stdout);
    assert_eq!(msc(&["etf", "decode", &bytes]).ok().out(), "{x,[1,2]}.\n");
}

#[test]
fn bad_bytes_are_a_user_error() {
    let run = msc_with_stdin(&["etf", "decode"], &[131, 104, 2, 97]).code(1);
    assert!(run.stderr.starts_with("msc: -: "), "{}", run.stderr);
    let run = msc_with_stdin(&["etf", "encode"], b"{a,").code(1);
    assert!(run.stderr.starts_with("-:\nerror: unexpected end of input"), "{}", run.stderr);
}

/// `--otp` orders a map of over 32 keys as that release's
/// `term_to_binary` does: the same bytes as the library's `encode_for`,
/// different between releases, decoding to the same term.
#[test]
fn encodings_follow_the_release() {
    let keys: Vec<String> = (1..=33).map(|i| format!("{i}.5 => {i}")).collect();
    let text = format!("#{{{}}}", keys.join(", "));
    let term = Term::parse(&text).expect("a term");
    let mut outputs = Vec::new();
    for release in matchspec::Release::ALL {
        let major = release.major().to_string();
        let encoded = msc_with_stdin(&["--otp", &major, "etf", "encode"], text.as_bytes()).ok();
        let library = matchspec::etf::encode_for(term.as_ref(), release).expect("encodable");
        assert_eq!(encoded.stdout, library, "{release}");
        let decoded = msc_with_stdin(&["etf", "decode"], &encoded.stdout).ok();
        assert_eq!(decoded.out(), format!("{term}.\n"), "{release}");
        outputs.push(encoded.stdout);
    }
    assert_ne!(outputs[0], outputs[1], "OTP 27 and 29 order these keys alike");
}
