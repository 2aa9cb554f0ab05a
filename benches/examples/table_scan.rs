//! Times `select_count` over a 1,000,000-row table, five times in a row,
//! on a table just filled: `cargo run --release -p msc-benches --example table_scan`.

use std::time::Instant;

use msc::table::{Table, TableOptions};
use msc::{Engine, Heap, Kind, Scratch, Spec, TestHost};

fn main() {
    let spec = Spec::builder()
        .engine(Engine::Jit)
        .build("[{{'_', '$2', '_'}, [{'<', '$2', 5}], [true]}]", Kind::Table)
        .expect("the spec compiles");
    for round in 0..3 {
        let table = Table::new(TableOptions::default());
        let mut heap = Heap::new();
        for n in 0..1_000_000i64 {
            heap.clear();
            let key = heap.int(n);
            let value = heap.int(n % 1000);
            let payload = heap.binary(b"payload");
            let row = heap.tuple(&[key, value, payload]);
            table.insert(heap.view(row)).expect("a tuple");
        }
        let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
        let times: Vec<String> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let n = table.select_count(&spec, &mut scratch, &mut host).expect("a table spec");
                assert_eq!(n, 5000);
                format!("{:.2} ms", start.elapsed().as_secs_f64() * 1e3)
            })
            .collect();
        println!("round {round}: {}", times.join(", "));
    }
}
