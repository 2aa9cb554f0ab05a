//! Tells `pin.rs`, compiled here against loom, to leave out its own tests.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(msc_loom)");
    println!("cargo::rustc-cfg=msc_loom");
}
