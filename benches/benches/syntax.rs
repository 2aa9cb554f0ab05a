//! Throughput of the term syntaxes, in bytes per second.
//!
//! Over one corpus of `.`-terminated terms (see [`msc_benches::corpus_path`]):
//!
//! * `text/parse`: the whole text into one heap, per byte of text;
//! * `text/print`: every term back to text with `Display`, per byte printed;
//! * `etf/encode`: every term to the external term format, per byte of ETF;
//! * `etf/decode`: those bytes back into one heap, per byte of ETF.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};
use matchspec::etf;
use matchspec::syntax::parse_terms_into;
use matchspec::term::{Heap, Word};
use msc_benches::{CORPUS_ENV, corpus_path, read_text};

/// Every term of `roots`, printed one per line with a final `.`, as the
/// corpus writes them.
fn print_all(heap: &Heap, roots: &[Word], out: &mut String) {
    for &root in roots {
        writeln!(out, "{}.", heap.view(root)).expect("writing to a String cannot fail");
    }
}

/// The `text` and `etf` groups.
fn syntax(c: &mut Criterion) {
    let path = corpus_path();
    let text = match read_text(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("skipping the syntax benchmarks: {err} (set {CORPUS_ENV} to a term file)");
            return;
        }
    };
    let mut heap = Heap::new();
    let roots = match parse_terms_into(&text, &mut heap) {
        Ok(roots) => roots,
        Err(err) => panic!("{}: {err}", path.display()),
    };
    let mut printed = String::new();
    print_all(&heap, &roots, &mut printed);
    // Every term the external format can carry (all of them, for the
    // shared corpus).
    let (encodable, encoded): (Vec<Word>, Vec<Vec<u8>>) =
        roots.iter().filter_map(|&root| Some((root, etf::encode(heap.view(root)).ok()?))).unzip();
    let etf_bytes: usize = encoded.iter().map(Vec::len).sum();
    eprintln!(
        "corpus {}: {} terms, {} bytes of text, {} printed, {} of ETF for {} terms",
        path.display(),
        roots.len(),
        text.len(),
        printed.len(),
        etf_bytes,
        encodable.len(),
    );

    let mut group = c.benchmark_group("text");
    // One pass over a multi-megabyte corpus takes milliseconds: a few flat
    // samples are enough.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse", |b| {
        let mut into = Heap::with_capacity(heap.len());
        b.iter(|| {
            into.clear();
            black_box(parse_terms_into(&text, &mut into))
        });
    });
    group.throughput(Throughput::Bytes(printed.len() as u64));
    group.bench_function("print", |b| {
        let mut out = String::with_capacity(printed.len());
        b.iter(|| {
            out.clear();
            print_all(&heap, &roots, &mut out);
            black_box(out.len())
        });
    });
    group.finish();

    let mut group = c.benchmark_group("etf");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Bytes(etf_bytes as u64));
    group.bench_function("encode", |b| {
        b.iter(|| {
            for &root in &encodable {
                black_box(etf::encode(heap.view(root)).ok());
            }
        });
    });
    group.bench_function("decode", |b| {
        let mut into = Heap::with_capacity(heap.len());
        b.iter(|| {
            into.clear();
            for bytes in &encoded {
                black_box(etf::decode_into(bytes, &mut into).ok());
            }
        });
    });
    group.finish();
}

// `criterion_group!` would make an undocumented `pub fn`; this is what it
// and `criterion_main!` expand to. Command-line options override the
// defaults here.
fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    syntax(&mut c);
    c.final_summary();
}
