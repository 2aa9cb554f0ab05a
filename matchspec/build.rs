//! Generates the term parser from `src/syntax/grammar.lalrpop`.

fn main() {
    println!("cargo:rerun-if-changed=src/syntax/grammar.lalrpop");
    if let Err(err) = lalrpop::Configuration::new().use_cargo_dir_conventions().process() {
        // A broken grammar is a bug in this crate; fail the build loudly.
        eprintln!("lalrpop failed: {err}");
        std::process::exit(1);
    }
}
