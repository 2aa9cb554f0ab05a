//! The BEAM library's tests, in a real BEAM.
//!
//! Lays the application out in a temporary directory (the NIF cargo built
//! for this test in `priv/`, the modules of `msc/src/` and the EUnit suites
//! of `msc/test/` compiled by `erlc` into `ebin/`) and runs each suite in its own
//! `erl`, in every Erlang this machine has:
//!
//! - the `erl` on the `PATH` (Debian's `erlang-nox`: OTP 25 on bookworm),
//!   which shows that the NIF loads on an older OTP;
//! - an Erlang installed in the root directory `MSC_OTP_ROOT` (run with
//!   `chroot`; `.ci/run` makes one with OTP 27 by debootstrap), where the
//!   corpus's answers, which are OTP 27's, must match exactly.
//!
//! Without any Erlang the tests say so and pass, unless `MSC_REQUIRE_BEAM`
//! is set (`.ci/run` sets it), where a missing one fails them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// An Erlang to run the suites in, with the application laid out for it.
struct Vm {
    /// The root directory it runs in (`/` for the host's).
    root: PathBuf,
    /// The application's directory, as the VM sees it.
    dir: PathBuf,
}

impl Vm {
    fn command(&self, program: &str) -> Command {
        if self.root == Path::new("/") {
            Command::new(program)
        } else {
            let mut command = Command::new("chroot");
            command.arg(&self.root).arg(program);
            command
        }
    }

    /// `path` as the host sees it.
    fn host_path(&self, path: &Path) -> PathBuf {
        self.root.join(path.strip_prefix("/").unwrap())
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .env("MSC_TEST_DATA", &self.dir)
            .output()
            .unwrap_or_else(|e| panic!("running {program} in {}: {e}", self.root.display()))
    }
}

/// The Erlangs to test in.
fn vms() -> &'static [Vm] {
    static VMS: OnceLock<Vec<Vm>> = OnceLock::new();
    VMS.get_or_init(|| {
        let mut roots = Vec::new();
        let host_erl = Command::new("erl").args(["-noshell", "-eval", "halt()."]).output();
        if host_erl.is_ok_and(|o| o.status.success()) {
            roots.push(PathBuf::from("/"));
        }
        if let Some(root) = std::env::var_os("MSC_OTP_ROOT") {
            roots.push(PathBuf::from(root));
        }
        if roots.is_empty() {
            assert!(
                std::env::var_os("MSC_REQUIRE_BEAM").is_none(),
                "MSC_REQUIRE_BEAM is set but there is no Erlang (no `erl`, no MSC_OTP_ROOT)"
            );
            eprintln!("skipped: no Erlang here (install erlang-nox to run the BEAM tests)");
        }
        roots.into_iter().map(lay_out).collect()
    })
}

/// Lays the application and the test data out under `root`'s `/tmp`.
fn lay_out(root: PathBuf) -> Vm {
    let beam = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(format!("/tmp/msc-beam-test-{}", std::process::id()));
    let vm = Vm { root, dir };
    let host_dir = vm.host_path(&vm.dir);
    let _ = std::fs::remove_dir_all(&host_dir);
    remove_stale_layouts(&vm.host_path(Path::new("/tmp")));
    for sub in ["msc/ebin", "msc/priv", "src"] {
        std::fs::create_dir_all(host_dir.join(sub)).unwrap();
    }

    // Cargo leaves the cdylib it built for this test beside the test
    // executable, in `deps/`.
    let exe = std::env::current_exe().unwrap();
    let name = format!("{}msc_nif{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let nif = exe.with_file_name(name);
    std::fs::copy(&nif, host_dir.join("msc/priv/libmsc_nif.so"))
        .unwrap_or_else(|e| panic!("copying {}: {e}", nif.display()));
    std::fs::copy(beam.join("msc/src/msc.app.src"), host_dir.join("msc/ebin/msc.app")).unwrap();

    let mut args = vec!["-Wall".to_owned(), "-Werror".to_owned(), "-o".to_owned()];
    args.push(vm.dir.join("msc/ebin").display().to_string());
    for folder in ["msc/src", "msc/test"] {
        for entry in std::fs::read_dir(beam.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "erl") {
                let name = path.file_name().unwrap();
                std::fs::copy(&path, host_dir.join("src").join(name)).unwrap();
                args.push(vm.dir.join("src").join(name).display().to_string());
            }
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let compiled = vm.run("erlc", &args);
    assert!(
        compiled.status.success(),
        "erlc failed:\n{}",
        String::from_utf8_lossy(&compiled.stdout)
    );

    write_corpus(&beam.join("../testdata/conformance/otp27-random-seed1.terms"), &host_dir);
    vm
}

/// Removes the layouts of earlier runs whose process is gone: the test
/// harness has no hook to remove this run's at its end, and each holds a
/// debug build of the NIF (some 100 MB).
fn remove_stale_layouts(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|name| name.strip_prefix("msc-beam-test-"));
        let Some(pid) = pid.filter(|pid| pid.parse::<u32>().is_ok()) else { continue };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The shared corpus as ETF, each case behind a 4-byte length, so the
/// Erlang side gets its pids as pids.
fn write_corpus(text: &Path, dir: &Path) {
    let text = std::fs::read_to_string(text).unwrap();
    let mut heap = msc::Heap::new();
    let cases = msc::parse_terms_into(&text, &mut heap).unwrap();
    let mut out = Vec::new();
    for case in cases {
        let bytes = msc::etf::encode(heap.view(case)).unwrap();
        out.extend_from_slice(&u32::try_from(bytes.len()).unwrap().to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    std::fs::write(dir.join("conformance.etf"), out).unwrap();
}

/// Runs the EUnit suite `module` in every Erlang there is; fails with its
/// output if any test fails in any of them.
fn eunit(module: &str) {
    for vm in vms() {
        let ebin = vm.dir.join("msc/ebin").display().to_string();
        let eval =
            format!("case eunit:test({module}, [verbose]) of ok -> halt(0); _ -> halt(1) end.");
        let output = vm.run("erl", &["-noshell", "-pa", &ebin, "-eval", &eval]);
        let text = String::from_utf8_lossy(&output.stdout);
        let errors = String::from_utf8_lossy(&output.stderr);
        let root = vm.root.display();
        assert!(
            output.status.success(),
            "EUnit {module} failed in the Erlang at {root}:\n{text}\n{errors}"
        );
        eprintln!("Erlang at {root}:\n{text}");
    }
}

#[test]
fn msc_module() {
    eunit("msc_tests");
}

#[test]
fn conformance_corpus_and_ets() {
    eunit("msc_conformance_tests");
}

#[test]
fn msc_table_against_ets() {
    eunit("msc_table_tests");
}

#[test]
fn msc_table_keeps_schedulers_free() {
    eunit("msc_table_latency_tests");
}

#[test]
fn msc_tracer_sinks_and_policies() {
    eunit("msc_tracer_tests");
    // The file sink's file, as `msc run --format dbg` reads it.
    for vm in vms() {
        let path = vm.host_path(&vm.dir.join("tracer_file.trace"));
        let count: u64 =
            std::fs::read_to_string(path.with_extension("trace.count")).unwrap().parse().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut reader = msc::stream::EtfReader::new(file).framing(msc::stream::Framing::DbgTrace);
        let mut heap = msc::Heap::new();
        let mut read = 0;
        while let Some(entry) = reader.next_into(&mut heap) {
            let message = heap.view(entry.unwrap()).to_string();
            assert!(message.starts_with("{trace,"), "{message}");
            read += 1;
            heap.clear();
        }
        assert_eq!(read, count, "{}", path.display());
    }
}

#[test]
fn msc_tracer_across_a_cluster() {
    eunit("msc_cluster_tests");
    // `msc run --input a.trace --input b.trace`: the nodes' files read as
    // one stream, every message a trace message.
    for vm in vms() {
        let dir = vm.host_path(&vm.dir.join("cluster"));
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert_eq!(files.len(), 2, "{files:?}");
        let mut heap = msc::Heap::new();
        let mut calls = 0;
        for path in &files {
            let mut reader = msc::stream::EtfReader::new(std::fs::File::open(path).unwrap())
                .framing(msc::stream::Framing::DbgTrace);
            while let Some(entry) = reader.next_into(&mut heap) {
                let message = heap.view(entry.unwrap()).to_string();
                calls += usize::from(message.contains(",call,{msc_tracer_tests,f,"));
                heap.clear();
            }
        }
        assert_eq!(calls, 80);
    }
}
