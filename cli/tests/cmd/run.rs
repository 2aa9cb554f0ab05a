//! `msc run`: the filter engine over text and ETF inputs.

use crate::{assert_caret, msc, msc_with_stdin, temp_file, testdata};

/// The external term format of every term of `text`, back to back, as
/// `term_to_binary/1,2` writes them; every third one compressed.
fn etf_stream(text: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (i, term) in matchspec::syntax::parse_terms(text).expect("terms").iter().enumerate() {
        let encoded = if i % 3 == 2 {
            matchspec::etf::encode_compressed(term.as_ref(), 6)
        } else {
            matchspec::etf::encode(term.as_ref())
        };
        bytes.extend(encoded.expect("encodable"));
    }
    bytes
}

const ORDERS_OUT: &str = "{user_1,150}.\n{failed,user_3}.\n{user_4,250}.\n";

#[track_caller]
fn assert_counts(stderr: &str, counts: &str) {
    let (line, rest) = stderr.split_once('\n').unwrap_or((stderr, ""));
    assert!(line.starts_with(counts) && line.ends_with(" s"), "counts: {stderr}");
    assert_eq!(rest, "", "only the counts on stderr (no progress bar off a terminal)");
}

#[test]
fn text_inputs() {
    let run = msc(&[
        "run",
        "--spec",
        &testdata("cli/orders.ms"),
        "--input",
        &testdata("cli/orders.terms"),
    ])
    .ok();
    assert_eq!(run.out(), ORDERS_OUT);
    assert_counts(&run.stderr, "4 events, 3 matched, 1 no match, ");
}

#[test]
fn etf_inputs() {
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let etf = temp_file("run_orders.etf", etf_stream(&text));
    let run = msc(&["run", "--spec", &testdata("cli/orders.ms"), "--input", &etf]).ok();
    assert_eq!(run.out(), ORDERS_OUT);
    assert_counts(&run.stderr, "4 events, 3 matched, 1 no match, ");
}

#[test]
fn integer_results_are_printed_as_erlang_reads_them() {
    // Integers of every size: the small ones are written without the term
    // printer, the others through it.
    let numbers = [
        "0",
        "-1",
        "7",
        "255",
        "256",
        "-256",
        "2147483647",
        "-2147483648",
        "576460752303423487",
        "-576460752303423488",
        "576460752303423488",
        "123456789012345678901234567890",
    ];
    let text: String = numbers.iter().map(|n| format!("{{n, {n}}}.\n")).collect();
    let expected: String = numbers.iter().map(|n| format!("{n}.\n")).collect();
    let spec = temp_file("run_integers.ms", "[{{n, '$1'}, [], ['$1']}].\n");
    let terms = temp_file("run_integers.terms", &text);
    let etf = temp_file("run_integers.etf", etf_stream(&text));
    for input in [&terms, &etf] {
        for engine in ["interp", "jit"] {
            let run = msc(&["run", "--spec", &spec, "--input", input, "--engine", engine]).ok();
            assert_eq!(run.out(), expected, "{input} on {engine}");
        }
    }
}

#[test]
fn all_prints_the_no_matches_of_encoded_inputs_too() {
    // Encoded input goes through the wire program, which rejects entries
    // without a call to the printer unless it asks for them.
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let etf = temp_file("run_orders_all.etf", etf_stream(&text));
    let spec = testdata("cli/orders.ms");
    let run = msc(&["run", "--spec", &spec, "--input", &etf, "--all"]).ok();
    let out = run.out();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines.iter().filter(|line| **line == "nomatch.").count(), 1, "{out}");
    assert_counts(&run.stderr, "4 events, 3 matched, 1 no match, ");
}

#[test]
fn inputs_from_stdin() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    for input in [text.as_bytes().to_vec(), etf_stream(&text)] {
        let run = msc_with_stdin(&["run", "--spec", &spec, "--input", "-"], &input).ok();
        assert_eq!(run.out(), ORDERS_OUT);
        assert_counts(&run.stderr, "4 events, 3 matched, 1 no match, ");
    }
    let spec_text = std::fs::read(&spec).expect("readable");
    let input = testdata("cli/orders.terms");
    let run = msc_with_stdin(&["run", "--spec", "-", "--input", &input], &spec_text).ok();
    assert_eq!(run.out(), ORDERS_OUT);
}

#[test]
fn trace_results_carry_their_flags() {
    let args =
        ["run", "--spec", &testdata("cli/calls.ms"), "--input", &testdata("cli/calls.terms")];
    let run = msc(&args).ok();
    assert_eq!(run.out(), "{{arg,42},[return_trace]}.\n{{arg,7},[return_trace]}.\n");
    assert_counts(&run.stderr, "3 events, 2 matched, 1 no match, ");

    let mut all = args.to_vec();
    all.push("--all");
    let run = msc(&all).ok();
    assert_eq!(run.out(), "{{arg,42},[return_trace]}.\nnomatch.\n{{arg,7},[return_trace]}.\n");
}

#[test]
fn kind_flag_overrides_the_file() {
    let spec = temp_file("run_kind.ms", "[{['$1'], [], [{message, '$1'}]}].");
    let input = temp_file("run_kind.terms", "[a]. [b, c]. [d].");
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--kind", "call"]).ok();
    assert_eq!(run.out(), "a.\nd.\n");
    // As a table spec (the default) it is invalid: message is for tracing.
    let run = msc(&["run", "--spec", &spec, "--input", &input]).code(1);
    assert!(run.stderr.contains("Special form 'message' used in wrong dialect."), "{}", run.stderr);
}

#[test]
fn unrunnable_inputs_are_counted() {
    let input = temp_file("run_unrunnable.terms", "[1, 2]. not_a_list. [3, 4].");
    let run = msc(&["run", "--spec", &testdata("cli/calls.ms"), "--input", &input]).ok();
    assert_eq!(run.out(), "{{arg,1},[return_trace]}.\n{{arg,3},[return_trace]}.\n");
    let (first, counts) = run.stderr.split_once('\n').expect("two lines");
    assert_eq!(
        first,
        format!("msc: {input}: input 2: a call spec runs on an argument list, not on not_a_list")
    );
    assert_counts(counts, "3 events, 2 matched, 0 no match, 1 not runnable, ");
}

#[test]
fn bad_inputs_are_user_errors() {
    let spec = testdata("cli/orders.ms");
    let text = temp_file("run_bad.terms", "{a, 1}.\n{b, 2.\n");
    let run = msc(&["run", "--spec", &spec, "--input", &text]).code(1);
    assert!(run.stderr.starts_with(&format!("{text}:\n")), "{}", run.stderr);
    assert_caret(&run.stderr, "unexpected end of input", 2, 6, ".");

    let first = etf_stream("{a, 1}.").len();
    let mut etf = etf_stream("{a, 1}. {b, 2}.");
    etf.truncate(etf.len() - 1);
    let etf = temp_file("run_bad.etf", etf);
    let run = msc(&["run", "--spec", &spec, "--input", &etf]).code(1);
    // The entries before the bad one are decided and counted first.
    assert!(run.stderr.starts_with("1 events, 0 matched, 1 no match, "), "{}", run.stderr);
    let named = format!("entry 2 (byte {first}): the input ends inside it");
    assert!(run.stderr.contains(&named), "{}", run.stderr);
}

/// `{packet, N}` framing of the terms of `text`.
fn packet_stream(text: &str, size: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for term in matchspec::syntax::parse_terms(text).expect("terms") {
        let encoded = matchspec::etf::encode(term.as_ref()).expect("encodable");
        bytes.extend(&(encoded.len() as u32).to_be_bytes()[4 - size..]);
        bytes.extend(encoded);
    }
    bytes
}

#[test]
fn packet_framed_inputs() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    for (size, format) in [(1, "packet1"), (2, "packet2"), (4, "packet4")] {
        let input = temp_file(&format!("run_orders.{format}"), packet_stream(&text, size));
        let run = msc(&["run", "--spec", &spec, "--input", &input, "--format", format]).ok();
        assert_eq!(run.out(), ORDERS_OUT, "{format}");
        assert_counts(&run.stderr, "4 events, 3 matched, 1 no match, ");
        // Without `--format`: told from the first entries.
        let run = msc(&["run", "--spec", &spec, "--input", &input]).ok();
        assert_eq!(run.out(), ORDERS_OUT, "{format} detected");
    }
}

#[test]
fn a_corrupt_entry_stops_the_run_after_the_ones_before() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let mut bytes = packet_stream(&text, 4);
    let third = packet_stream(&text, 4).len() - packet_stream(&tail(&text, 2), 4).len();
    bytes[third + 4] = 0; // the third entry's version byte
    let input = temp_file("run_corrupt.packet4", bytes);
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--format", "packet4"]).code(1);
    assert_eq!(run.out(), "{user_1,150}.\n", "the first two entries are decided and printed");
    assert!(run.stderr.contains(&format!("entry 3 (byte {third})")), "{}", run.stderr);
}

#[test]
fn skip_bad_goes_past_framed_entries_that_fail() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let mut bytes = packet_stream(&text, 4);
    let third = packet_stream(&text, 4).len() - packet_stream(&tail(&text, 2), 4).len();
    bytes[third + 4] = 0;
    let input = temp_file("run_skip.packet4", bytes);
    let args = ["run", "--spec", &spec, "--input", &input, "--format", "packet4", "--skip-bad"];
    let run = msc(&args).ok();
    assert_eq!(run.out(), "{user_1,150}.\n{user_4,250}.\n");
    assert!(run.stderr.contains(&format!("skipped entry 3 (byte {third})")), "{}", run.stderr);
    assert!(run.stderr.contains("3 events, 2 matched, 1 no match, 1 bad entries skipped, "));

    // Concatenated terms have no length to skip by: the run still stops.
    let mut etf = etf_stream("{a, 1}. {b, 2}.");
    etf.truncate(etf.len() - 1);
    let etf = temp_file("run_skip.etf", etf);
    msc(&["run", "--spec", &spec, "--input", &etf, "--skip-bad"]).code(1);
}

/// The last `n` terms of `text`, as text.
fn tail(text: &str, n: usize) -> String {
    let terms = matchspec::syntax::parse_terms(text).expect("terms");
    terms[terms.len() - n..].iter().map(|t| format!("{t}.\n")).collect()
}

#[test]
fn results_can_be_written_encoded() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let results = matchspec::syntax::parse_terms(ORDERS_OUT).expect("terms");
    let results: String = results.iter().map(|t| format!("{t}.\n")).collect();
    // As concatenated terms, whatever the input.
    let input = temp_file("run_out.terms", &text);
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--output", "etf"]).ok();
    assert_eq!(run.stdout, etf_stream(&results));
    // Framed as the input was.
    for (size, format) in [(1, "packet1"), (4, "packet4")] {
        let input = temp_file(&format!("run_out.{format}"), packet_stream(&text, size));
        let args =
            ["run", "--spec", &spec, "--input", &input, "--format", format, "--output", "input"];
        let run = msc(&args).ok();
        assert_eq!(run.stdout, packet_stream(&results, size), "{format}");
    }
    // Text input written as the input was: text.
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--output", "input"]).ok();
    assert_eq!(run.out(), ORDERS_OUT);
}

#[test]
fn projections_are_written_from_the_input_bytes() {
    let spec = temp_file(
        "run_bytes.ms",
        "[{{event, '$1', '$2'}, [{is_integer, '$2'}], [{{'$2', '$1', {'+', '$2', 1}}}]}].",
    );
    // {event, 'café', 7}, the atom in Latin-1 (`ATOM_EXT`), as an old node
    // writes it.
    let input = [131, 104, 3, 119, 5, b'e', b'v', b'e', b'n', b't', 100, 0, 4, b'c', b'a', b'f']
        .into_iter()
        .chain([0xe9, 97, 7])
        .collect::<Vec<u8>>();
    let input = temp_file("run_bytes.etf", input);
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--output", "etf"]).ok();
    // The atom's bytes copied as they were; the sum encoded.
    let atom = [100, 0, 4, b'c', b'a', b'f', 0xe9];
    let expected = [&[131, 104, 3, 97, 7][..], &atom, &[97, 8]].concat();
    assert_eq!(run.stdout, expected);
    assert_eq!(matchspec::etf::decode(&run.stdout).expect("decodes").to_string(), "{7,café,8}");
    let run = msc(&["run", "--spec", &spec, "--input", &input]).ok();
    assert_eq!(run.out(), "{7,café,8}.\n");
}

#[test]
fn an_input_read_as_another_format_says_what_it_looks_like() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let cases = [
        ("looks_etf.etf", etf_stream(&text), "text", "external term format terms", "etf"),
        ("looks_text.terms", text.clone().into_bytes(), "etf", "term text", "text"),
        ("looks_p4.p4", packet_stream(&text, 4), "etf", "{packet, 4} entries", "packet4"),
        ("looks_p4_as_2.p4", packet_stream(&text, 4), "packet2", "{packet, 4} entries", "packet4"),
    ];
    for (name, bytes, given, looks, flag) in cases {
        let input = temp_file(name, bytes);
        let run = msc(&["run", "--spec", &spec, "--input", &input, "--format", given]).code(1);
        let hint = format!("msc: {input} looks like {looks}: read it with --format {flag}");
        assert!(run.stderr.contains(&hint), "{name} as {given}: {}", run.stderr);
    }
    // Read as what it is, a damaged entry is only that.
    let mut damaged = etf_stream(&text);
    damaged.truncate(damaged.len() - 1);
    let input = temp_file("looks_damaged.etf", damaged);
    let run = msc(&["run", "--spec", &spec, "--input", &input]).code(1);
    assert!(!run.stderr.contains("looks like"), "{}", run.stderr);
    // Bytes of no format: their first bytes.
    let input = temp_file("looks_other.bin", [0xff, 0xfe, 0x00, 0x07, 0x80]);
    let run = msc(&["run", "--spec", &spec, "--input", &input]).code(1);
    let hint = format!("msc: {input} looks like none of the input formats: it starts with bytes");
    assert!(run.stderr.contains(&hint), "{}", run.stderr);
}

#[test]
fn several_inputs_are_one_stream() {
    let spec = testdata("cli/orders.ms");
    let text = std::fs::read_to_string(testdata("cli/orders.terms")).expect("readable");
    let last_two = temp_file("run_several.terms", tail(&text, 2));
    let etf = temp_file("run_several.etf", etf_stream(&text));
    // In the order given, each file's format detected on its own.
    let run = msc(&["run", "--spec", &spec, "--input", &etf, "--input", &last_two]).ok();
    assert_eq!(run.out(), format!("{ORDERS_OUT}{}", tail(ORDERS_OUT, 2)));
    assert_counts(&run.stderr, "6 events, 5 matched, 1 no match, ");
    let run = msc(&["run", "--spec", &spec, "--input", &last_two, "--input", &etf]).ok();
    assert_eq!(run.out(), format!("{}{ORDERS_OUT}", tail(ORDERS_OUT, 2)));
    // A bad entry in the second file stops the run there, naming that file.
    let mut bad = etf_stream(&text);
    bad.truncate(bad.len() - 1);
    let bad = temp_file("run_several_bad.etf", bad);
    let run = msc(&["run", "--spec", &spec, "--input", &etf, "--input", &bad]).code(1);
    assert_eq!(
        run.out(),
        format!(
            "{ORDERS_OUT}{}",
            tail(ORDERS_OUT, 3).lines().take(2).map(|l| format!("{l}\n")).collect::<String>()
        )
    );
    assert!(run.stderr.contains(&format!("msc: {bad}: entry 4 (byte ")), "{}", run.stderr);
    assert!(run.stderr.starts_with("7 events, "), "{}", run.stderr);
}

#[test]
fn dbg_trace_files_are_read_and_written_as_dbg_does() {
    let all = temp_file("run_dbg_all.ms", "[{'_', [], ['$_']}].");
    // Keeping every message, framed as the input: the file OTP wrote, byte for byte.
    let single = testdata("dbg/single.trace");
    let run = msc(&["run", "--spec", &all, "--input", &single, "--output", "input"]).ok();
    assert_eq!(run.stdout, std::fs::read(&single).expect("readable"));
    // A wrap set given in any order reads in dbg's order.
    let wrap: Vec<String> =
        [4, 0, 3, 1].iter().map(|i| testdata(&format!("dbg/wrap.{i}.trace"))).collect();
    let mut args = vec!["run", "--spec", &all];
    for path in &wrap {
        args.extend(["--input", path]);
    }
    let run = msc(&args).ok();
    let expected = std::fs::read_to_string(testdata("dbg/wrap.messages")).expect("readable");
    let parse = |text: &str| matchspec::syntax::parse_terms(text).expect("terms");
    assert_eq!(parse(&run.out()), parse(&expected));
    // Files of a set that dbg would not read as one are refused.
    let args = ["run", "--spec", &all, "--input", &wrap[1], "--input", &wrap[0]];
    let run = msc(&args).code(1);
    assert!(run.stderr.contains("are not a wrap set dbg reads"), "{}", run.stderr);
}

#[test]
fn jobs_split_the_input_and_keep_its_order() {
    let spec = testdata("cli/orders.ms");
    // Over a megabyte, so that it is several runs of entries.
    let text: String = (0..100_000)
        .map(|i| format!("{{user_{i}, {}, {}}}.\n", i % 300, ["ok", "error", "ok"][i % 3]))
        .collect();
    let mut bytes = packet_stream(&text, 4);
    assert!(bytes.len() > 2 << 20, "{}", bytes.len());
    let input = temp_file("run_jobs.p4", &bytes);
    let args = |jobs: &'static str| {
        ["run", "--spec", &spec, "--input", &input, "--format", "packet4", "--jobs", jobs]
            .map(str::to_owned)
    };
    let one = msc(&args("1").each_ref().map(String::as_str)).ok();
    let two = msc(&args("2").each_ref().map(String::as_str)).ok();
    assert_eq!(two.stdout, one.stdout);
    assert!(one.out().lines().count() > 30_000);
    assert_eq!(counts_of(&two.stderr), counts_of(&one.stderr));

    // A bad entry deep in the input: everything before it is written, and
    // the error names its number and byte in the whole input.
    let entry = 90_001;
    let at = packet_stream(
        &text.lines().take(entry - 1).map(|l| format!("{l}\n")).collect::<String>(),
        4,
    )
    .len();
    bytes[at + 4] = 0;
    let input = temp_file("run_jobs_bad.p4", &bytes);
    let args = ["run", "--spec", &spec, "--input", &input, "--format", "packet4", "--jobs", "2"];
    let run = msc(&args).code(1);
    let alone = msc(&[&args[..8], &["1"]].concat()).code(1);
    assert_eq!(run.stdout, alone.stdout, "the results before the bad entry, all of them");
    assert!(run.out().lines().count() > 25_000);
    assert!(run.stderr.contains(&format!("entry {entry} (byte {at})")), "{}", run.stderr);
    // The reader's own error, a truncated last entry: the same.
    let mut cut = packet_stream(&text, 4);
    cut.truncate(cut.len() - 3);
    let cut = temp_file("run_jobs_cut.p4", &cut);
    let args_cut = ["run", "--spec", &spec, "--input", &cut, "--format", "packet4", "--jobs", "2"];
    let run = msc(&args_cut).code(1);
    assert_eq!(run.stdout, msc(&[&args_cut[..8], &["1"]].concat()).code(1).stdout);
    assert!(run.out().lines().count() > 30_000);
    assert!(run.stderr.contains("entry 100000 (byte "), "{}", run.stderr);
    let skipping = [&args[..], &["--skip-bad"]].concat();
    let run = msc(&skipping).ok();
    assert!(run.stderr.contains(&format!("skipped entry {entry} (byte {at})")), "{}", run.stderr);
    assert!(run.stderr.contains("1 bad entries skipped"), "{}", run.stderr);
}

/// The reader thread of `--jobs` finds where concatenated terms end
/// without checking them; the workers check. A term that does not decode
/// (a float that is not finite) deep in the input stops the run where one
/// job stops it, with the same results before it and the same error.
#[test]
fn jobs_stop_at_a_term_that_does_not_decode_as_one_job_does() {
    let spec = testdata("cli/orders.ms");
    let entry = 90_001;
    let text: String = (1..=100_000)
        .map(|i| {
            if i == entry {
                "{bad, 1.5}.\n".to_owned()
            } else {
                format!("{{user_{i}, {}, ok}}.\n", i % 300)
            }
        })
        .collect();
    let (mut bytes, mut at) = (Vec::new(), 0);
    for (i, term) in matchspec::syntax::parse_terms(&text).expect("terms").iter().enumerate() {
        if i + 1 == entry {
            at = bytes.len();
        }
        bytes.extend(matchspec::etf::encode(term.as_ref()).expect("encodable"));
    }
    assert!(bytes.len() > 2 << 20, "{}", bytes.len());
    let float = at + bytes[at..].iter().position(|&b| b == 70).expect("the float's tag") + 1;
    bytes[float..float + 8].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
    let input = temp_file("run_jobs_nan.etf", &bytes);
    let args = |jobs: &'static str| {
        ["run", "--spec", spec.as_str(), "--input", input.as_str(), "--jobs", jobs]
    };
    let (one, two) = (msc(&args("1")).code(1), msc(&args("2")).code(1));
    assert_eq!(two.stdout, one.stdout, "the results before the bad term, all of them");
    assert!(two.out().lines().count() > 25_000);
    let error = |stderr: &str| stderr.lines().find(|l| l.contains("entry")).map(str::to_owned);
    assert_eq!(error(&two.stderr), error(&one.stderr));
    assert!(two.stderr.contains(&format!("entry {entry} (byte {at})")), "{}", two.stderr);
}

/// The counts line of `msc run`'s standard error, without the time.
fn counts_of(stderr: &str) -> String {
    let line = stderr.lines().last().expect("a counts line");
    line.rsplit_once(", ").map_or(line, |(counts, _)| counts).to_owned()
}

#[test]
fn jobs_split_text_and_read_it_as_one_piece() {
    let spec = testdata("cli/orders.ms");
    let line = |i: usize| format!("{{user_{i}, {}, {}}}.\n", i % 300, ["ok", "error", "ok"][i % 3]);
    let mut text: String = (0..40_000).map(line).collect();
    // A term of many lines, across where the text is cut into runs, with
    // dots and comment signs in its string.
    text.push_str("{note, \"");
    text.push_str(&"a line. with % and a dot.\n".repeat(60_000));
    text.push_str("\", x}. {user_big, 200, ok}.\n% a comment. {user_0, 1, ok}.\n");
    text.extend((40_000..80_000).map(line));
    assert!(text.len() > 3 << 20);
    let runs = |name: &str, text: &str, extra: &[&str]| {
        let input = temp_file(name, text);
        let args = |jobs: &'static str| {
            [
                &["run", "--spec", spec.as_str(), "--input", input.as_str(), "--jobs", jobs][..],
                extra,
            ]
            .concat()
        };
        (msc(&args("1")), msc(&args("2")))
    };
    let (one, two) = runs("run_jobs_text.terms", &text, &[]);
    assert!(one.status.success() && two.status.success(), "{}", two.stderr);
    assert_eq!(two.stdout, one.stdout);
    assert!(one.out().contains("{user_big,200}"));
    assert_eq!(counts_of(&two.stderr), counts_of(&one.stderr));

    // A term that does not parse, deep in: the same results before it and
    // the same error, with its line in the whole text.
    let bad = text.replacen("{user_70000, ", "{user_70000,, ", 1);
    let (one, two) = runs("run_jobs_text_bad.terms", &bad, &[]);
    assert_eq!(two.stdout, one.stdout);
    assert_eq!(two.stderr, one.stderr);
    assert!(two.stderr.contains("--> 130003:13"), "{}", two.stderr);
    let (one, two) = runs("run_jobs_text_skip.terms", &bad, &["--skip-bad"]);
    assert_eq!(two.stdout, one.stdout);
    assert!(two.stderr.contains("skipped term 70003:"), "{}", two.stderr);
    assert_eq!(counts_of(&two.stderr), counts_of(&one.stderr));
}

#[test]
fn jobs_report_unrunnable_inputs_in_order_with_their_numbers() {
    // Over a megabyte of call arguments, with two that are not lists.
    let text: String = (1..=100_000)
        .map(|i| {
            if i == 3 || i == 95_000 { "not_a_list.\n".to_owned() } else { format!("[{i}, x].\n") }
        })
        .collect();
    let input = temp_file("run_jobs_unrunnable.etf", etf_stream(&text));
    let spec = testdata("cli/calls.ms");
    let args = |jobs: &'static str| {
        ["run", "--spec", spec.as_str(), "--input", input.as_str(), "--jobs", jobs]
    };
    let (one, two) = (msc(&args("1")).ok(), msc(&args("2")).ok());
    assert_eq!(two.stdout, one.stdout);
    let messages = |stderr: &str| {
        stderr.lines().filter(|l| l.contains("not_a_list")).map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(messages(&two.stderr), messages(&one.stderr));
    assert_eq!(messages(&two.stderr).len(), 2);
    assert!(two.stderr.contains(&format!("msc: {input}: input 95000: ")), "{}", two.stderr);
}
