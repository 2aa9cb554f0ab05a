//! The filter over encoded streams, per byte: `Filter` (deciding on the
//! wire where the heads allow) against decoding every entry first, on the
//! events `benches/stream/streams.erl` writes (`{event, I, user_K, Op,
//! Size}`, made here the same way), concatenated and `{packet, 4}`-framed,
//! with a selective spec (10% kept) and a projecting one (all kept).
//!
//! `msc bench --stream` times the whole `msc run` job on a file instead
//! (reading it, writing the results); see `benches/README.md`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use msc::stream::{Entry, EtfReader, Filter, Framing, Sink};
use msc::{Engine, EvalError, Heap, Kind, Outcome, Run, Scratch, Spec, Term, TestHost, etf};

const EVENTS: u64 = 200_000;
const OPS: [&str; 7] = ["get", "put", "delete", "post", "head", "get", "put"];

/// Event `i`, as the Erlang generator writes it.
fn event(i: u64) -> String {
    let size = (i * 7919) % 10_000;
    format!("{{event, {i}, user_{}, {}, {size}}}", i % 50, OPS[(i % 7) as usize])
}

/// The stream of events, framed.
fn stream(framing: Framing) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 1..=EVENTS {
        let term = etf::encode(Term::parse(&event(i)).expect("term").as_ref()).expect("encodes");
        if framing == Framing::Packet4 {
            bytes.extend((term.len() as u32).to_be_bytes());
        }
        bytes.extend(term);
    }
    bytes
}

/// Counts the matches (and, like `msc run`, asks for nothing else).
struct Count(u64);

impl Sink for Count {
    fn decided(
        &mut self,
        _: Entry<'_>,
        outcome: Result<&Outcome<'_>, &EvalError>,
    ) -> std::io::Result<()> {
        if let Ok(Outcome::Match(m)) = outcome {
            black_box(m.result);
            self.0 += 1;
        }
        Ok(())
    }

    fn wants_no_matches(&self) -> bool {
        false
    }
}

fn streams(c: &mut Criterion) {
    let specs = [
        ("selective", "[{{event, '$1', '_', delete, '$2'}, [{'>=', '$2', 5000}], ['$1']}]"),
        ("project", "[{{event, '$1', '$2', '_', '$3'}, [], [{{'$2', '$3'}}]}]"),
    ];
    for (framing, name) in [(Framing::Concatenated, "etf"), (Framing::Packet4, "packet4")] {
        let bytes = stream(framing);
        let mut group = c.benchmark_group(format!("stream/{name}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.measurement_time(Duration::from_secs(4));
        for (spec_name, text) in specs {
            let spec = Spec::builder().engine(Engine::Jit).build(text, Kind::Table).expect("spec");
            group.bench_function(format!("{spec_name}/filter"), |b| {
                b.iter(|| {
                    let mut reader = EtfReader::new(&bytes[..]).framing(framing);
                    let mut count = Count(0);
                    Filter::new(&spec).run(&mut reader, &mut count).expect("no sink error");
                    count.0
                });
            });
            group.bench_function(format!("{spec_name}/decode_first"), |b| {
                let (mut heap, mut scratch, mut host) =
                    (Heap::new(), Scratch::new(), TestHost::default());
                b.iter(|| {
                    let mut reader = EtfReader::new(&bytes[..]).framing(framing);
                    let mut matched = 0u64;
                    while let Some(entry) = reader.next_into(&mut heap) {
                        let word = entry.expect("decodes");
                        if let Ok(Outcome::Match(m)) =
                            spec.run(heap.view(word), &mut scratch, &mut host)
                        {
                            black_box(m.result);
                            matched += 1;
                        }
                        heap.clear();
                    }
                    matched
                });
            });
        }
        group.finish();
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    streams(&mut criterion);
    criterion.final_summary();
}
