//! The BEAM library's tests, in a real BEAM.
//!
//! Lays the application out in a temporary directory (the NIF cargo built
//! for this test in `priv/`, the modules of `msc/src/` and the EUnit suites
//! of `msc/test/` compiled by `erlc` into `ebin/`) and runs each suite in its
//! own `erl`, in every Erlang this machine has:
//!
//! - the `erl` on the `PATH` (Debian's `erlang-nox`: OTP 25 on bookworm),
//!   which shows that the NIF loads on an older OTP;
//! - the Erlangs installed in the root directories of `MSC_OTP_ROOT`
//!   (several separated by `:`, run with `chroot`; `.ci/run` makes OTP 27
//!   and OTP 29 by debootstrap), where msc must give that release's answers:
//!   the conformance corpus of the VM's release, and the VM's own
//!   `erlang:match_spec_test/3`.
//!
//! Each suite in each Erlang is a test of its own (`msc_module::host`,
//! `msc_module::otp27-root`, named after the root's directory). One that cannot run is reported as ignored, and
//! a line before the tests says why and what to install: no such Erlang, an
//! Erlang without `erlc` or EUnit, or one older than the suite needs
//! (`otp27` runs only in OTP 27 and later). With `MSC_REQUIRE_BEAM` set
//! (`.ci/run` sets it) a missing or incomplete Erlang, or a suite that runs
//! in none, fails instead.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use std::sync::{Arc, OnceLock};

use libtest_mimic::{Arguments, Failed, Trial};

/// Where an Erlang is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    /// The `erl` on the `PATH`.
    Host,
    /// A root directory of `MSC_OTP_ROOT`, run with `chroot`.
    OtpRoot(PathBuf),
    /// `MSC_OTP_ROOT` is not set.
    NoOtpRoot,
}

impl Place {
    /// Every place this machine names: the host, and each root of
    /// `MSC_OTP_ROOT`.
    fn all() -> Vec<Place> {
        let roots = match std::env::var_os("MSC_OTP_ROOT") {
            Some(roots) => std::env::split_paths(&roots).map(Place::OtpRoot).collect(),
            None => vec![Place::NoOtpRoot],
        };
        std::iter::once(Place::Host).chain(roots).collect()
    }

    fn name(&self) -> String {
        match self {
            Place::Host => "host".to_owned(),
            Place::OtpRoot(root) => {
                root.file_name().map_or("otp_root".into(), |n| n.to_string_lossy().into_owned())
            }
            Place::NoOtpRoot => "otp_root".to_owned(),
        }
    }
}

/// An Erlang to run the suites in; the application is laid out for it
/// when a suite first needs it.
struct Vm {
    place: Place,
    /// The root directory it runs in (`/` for the host's).
    root: PathBuf,
    /// Its OTP release.
    otp: u32,
    /// The application's directory, as the VM sees it.
    dir: PathBuf,
    /// Laid out (or why not).
    laid_out: OnceLock<Result<(), String>>,
}

/// What a place has: a complete Erlang, or why it cannot run the suites.
enum Probe {
    Ready(Arc<Vm>),
    Missing(String),
}

impl Vm {
    fn command(root: &Path, program: &str) -> Command {
        if root == Path::new("/") {
            Command::new(program)
        } else {
            let mut command = Command::new("chroot");
            command.arg(root).arg(program);
            command
        }
    }

    /// `path` as the host sees it.
    fn host_path(&self, path: &Path) -> PathBuf {
        self.root.join(path.strip_prefix("/").expect("an absolute path"))
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        Vm::command(&self.root, program)
            .args(args)
            .env("MSC_TEST_DATA", &self.dir)
            .output()
            .map_err(|e| format!("running {program} in {}: {e}", self.root.display()))
    }

    /// The application laid out under the VM's `/tmp` (once).
    fn ready(&self) -> Result<(), Failed> {
        self.laid_out.get_or_init(|| lay_out(self)).clone().map_err(Failed::from)
    }
}

/// Looks for a complete Erlang at `place`: `erl` that runs, `erlc`, and
/// EUnit (Debian packages them apart: `erlang-nox`, `erlang-dev`,
/// `erlang-eunit`).
fn probe(place: &Place) -> Probe {
    let root = match place {
        Place::Host => PathBuf::from("/"),
        Place::OtpRoot(root) => root.clone(),
        Place::NoOtpRoot => {
            return Probe::Missing(
                "MSC_OTP_ROOT is not set (.ci/run makes OTP 27 and 29 roots with debootstrap)"
                    .into(),
            );
        }
    };
    let at = match place {
        Place::Host => "on the PATH".to_owned(),
        Place::OtpRoot(_) | Place::NoOtpRoot => format!("in {}", root.display()),
    };
    let eval = "EUnit = case code:lib_dir(eunit) of \
                    {error, _} -> false; \
                    Dir -> filelib:is_file(filename:join(Dir, \"include/eunit.hrl\")) \
                end, \
                io:format(\"~s ~p\", [erlang:system_info(otp_release), EUnit]), halt().";
    let answer = Vm::command(&root, "erl").args(["-noshell", "-eval", eval]).output();
    let Ok(answer) = answer.as_ref().map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    else {
        return Probe::Missing(format!("no `erl` {at} (install erlang-nox)"));
    };
    let mut words = answer.split_whitespace();
    let otp = words.next().and_then(|r| r.parse::<u32>().ok());
    let Some(otp) = otp else {
        return Probe::Missing(format!("`erl` {at} does not run: {answer:?}"));
    };
    if words.next() != Some("true") {
        return Probe::Missing(format!(
            "the Erlang {at} (OTP {otp}) has no EUnit (install erlang-eunit)"
        ));
    }
    // `erlc` with nothing to compile succeeds (127: chroot found none).
    let erlc = Vm::command(&root, "erlc").output();
    if !erlc.is_ok_and(|o| o.status.success()) {
        return Probe::Missing(format!("the Erlang {at} has no `erlc` (install erlang-dev)"));
    }
    let dir = PathBuf::from(format!("/tmp/msc-beam-test-{}", std::process::id()));
    Probe::Ready(Arc::new(Vm { place: place.clone(), root, otp, dir, laid_out: OnceLock::new() }))
}

/// Lays the application and the test data out under the VM's `/tmp`.
fn lay_out(vm: &Vm) -> Result<(), String> {
    let beam = Path::new(env!("CARGO_MANIFEST_DIR"));
    let host_dir = vm.host_path(&vm.dir);
    let _ = std::fs::remove_dir_all(&host_dir);
    remove_stale_layouts(&vm.host_path(Path::new("/tmp")));
    let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
    for sub in ["msc/ebin", "msc/priv", "src"] {
        std::fs::create_dir_all(host_dir.join(sub)).map_err(|e| io(sub, e))?;
    }

    // Cargo leaves the cdylib it built for this test beside the test
    // executable, in `deps/`.
    let exe = std::env::current_exe().map_err(|e| io("the test executable", e))?;
    let name = format!("{}msc_nif{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let nif = exe.with_file_name(name);
    std::fs::copy(&nif, host_dir.join("msc/priv/libmsc_nif.so"))
        .map_err(|e| io(&nif.display().to_string(), e))?;
    std::fs::copy(beam.join("msc/src/msc.app.src"), host_dir.join("msc/ebin/msc.app"))
        .map_err(|e| io("msc.app.src", e))?;

    let mut args = vec!["-Wall".to_owned(), "-Werror".to_owned(), "-o".to_owned()];
    args.push(vm.dir.join("msc/ebin").display().to_string());
    for folder in ["msc/src", "msc/test"] {
        let entries = std::fs::read_dir(beam.join(folder)).map_err(|e| io(folder, e))?;
        for entry in entries {
            let path = entry.map_err(|e| io(folder, e))?.path();
            if path.extension().is_some_and(|e| e == "erl") {
                let name = path.file_name().expect("a file");
                std::fs::copy(&path, host_dir.join("src").join(name))
                    .map_err(|e| io(&path.display().to_string(), e))?;
                args.push(vm.dir.join("src").join(name).display().to_string());
            }
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let compiled = vm.run("erlc", &args)?;
    if !compiled.status.success() {
        let (out, err) = (&compiled.stdout, &compiled.stderr);
        let (out, err) = (String::from_utf8_lossy(out), String::from_utf8_lossy(err));
        return Err(format!("erlc failed:\n{out}{err}"));
    }
    // The shared corpus as the VM's release answers it.
    let release = msc::Release::for_vm(vm.otp).major();
    let corpus = format!("../testdata/conformance/otp{release}-random-seed1.terms");
    write_corpus(&beam.join(corpus), &host_dir)
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
fn write_corpus(text: &Path, dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(text).map_err(|e| format!("{}: {e}", text.display()))?;
    let mut heap = msc::Heap::new();
    let cases = msc::parse_terms_into(&text, &mut heap).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for case in cases {
        let bytes = msc::etf::encode(heap.view(case)).map_err(|e| e.to_string())?;
        let len = u32::try_from(bytes.len()).map_err(|e| e.to_string())?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    std::fs::write(dir.join("conformance.etf"), out).map_err(|e| e.to_string())
}

/// Runs the EUnit suite `module` in `vm`; fails with its output if any of
/// its tests fails.
fn eunit(vm: &Vm, module: &str) -> Result<(), Failed> {
    vm.ready()?;
    let ebin = vm.dir.join("msc/ebin").display().to_string();
    let eval = format!("case eunit:test({module}, [verbose]) of ok -> halt(0); _ -> halt(1) end.");
    let output = vm.run("erl", &["-noshell", "-pa", &ebin, "-eval", &eval])?;
    let text = String::from_utf8_lossy(&output.stdout);
    let errors = String::from_utf8_lossy(&output.stderr);
    let root = vm.root.display();
    if !output.status.success() {
        return Err(
            format!("EUnit {module} failed in the Erlang at {root}:\n{text}\n{errors}").into()
        );
    }
    eprintln!("{module} in the Erlang at {root} ({}, OTP {}):\n{text}", vm.place.name(), vm.otp);
    Ok(())
}

/// A suite: an EUnit module, the oldest OTP it runs in, and what to check
/// after it on the Rust side.
struct Suite {
    name: &'static str,
    module: &'static str,
    min_otp: u32,
    after: fn(&Vm) -> Result<(), Failed>,
}

const SUITES: &[Suite] = &[
    Suite { name: "msc_module", module: "msc_tests", min_otp: 0, after: nothing },
    Suite {
        name: "conformance_corpus",
        module: "msc_conformance_tests",
        min_otp: 0,
        after: nothing,
    },
    Suite { name: "otp27", module: "msc_otp27_tests", min_otp: 27, after: nothing },
    Suite { name: "msc_table_against_ets", module: "msc_table_tests", min_otp: 0, after: nothing },
    Suite {
        name: "msc_table_under_concurrency",
        module: "msc_table_concurrency_tests",
        min_otp: 0,
        after: nothing,
    },
    Suite {
        name: "msc_table_keeps_schedulers_free",
        module: "msc_table_latency_tests",
        min_otp: 0,
        after: nothing,
    },
    Suite {
        name: "msc_tracer_sinks_and_policies",
        module: "msc_tracer_tests",
        min_otp: 0,
        after: tracer_file,
    },
    Suite {
        name: "msc_tracer_across_a_cluster",
        module: "msc_cluster_tests",
        min_otp: 0,
        after: cluster_files,
    },
];

fn nothing(_: &Vm) -> Result<(), Failed> {
    Ok(())
}

/// The file sink's file, as `msc run --format dbg` reads it.
fn tracer_file(vm: &Vm) -> Result<(), Failed> {
    let path = vm.host_path(&vm.dir.join("tracer_file.trace"));
    let count =
        std::fs::read_to_string(path.with_extension("trace.count")).map_err(|e| e.to_string())?;
    let count: u64 = count.trim().parse().map_err(|e| format!("{count:?}: {e}"))?;
    let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = msc::stream::EtfReader::new(file).framing(msc::stream::Framing::DbgTrace);
    let mut heap = msc::Heap::new();
    let mut read = 0;
    while let Some(entry) = reader.next_into(&mut heap) {
        let message = heap.view(entry.map_err(|e| e.to_string())?).to_string();
        if !message.starts_with("{trace,") {
            return Err(format!("not a trace message: {message}").into());
        }
        read += 1;
        heap.clear();
    }
    if read != count {
        return Err(format!("{}: {read} messages, the sink wrote {count}", path.display()).into());
    }
    Ok(())
}

/// `msc run --input a.trace --input b.trace`: the nodes' files read as one
/// stream, every message a trace message.
fn cluster_files(vm: &Vm) -> Result<(), Failed> {
    let dir = vm.host_path(&vm.dir.join("cluster"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    if files.len() != 2 {
        return Err(format!("{files:?}: two files expected").into());
    }
    let mut heap = msc::Heap::new();
    let mut calls = 0;
    for path in &files {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let mut reader = msc::stream::EtfReader::new(file).framing(msc::stream::Framing::DbgTrace);
        while let Some(entry) = reader.next_into(&mut heap) {
            let message = heap.view(entry.map_err(|e| e.to_string())?).to_string();
            calls += usize::from(message.contains(",call,{msc_tracer_tests,f,"));
            heap.clear();
        }
    }
    if calls != 80 {
        return Err(format!("{calls} calls of msc_tracer_tests:f in the files, 80 expected").into());
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    // One VM at a time: each uses every core, and the latency suite
    // measures how long a scheduler is held.
    args.test_threads = args.test_threads.or(Some(1));
    let probes: Vec<(Place, Probe)> = Place::all()
        .into_iter()
        .map(|place| {
            let probe = probe(&place);
            (place, probe)
        })
        .collect();
    let require = std::env::var_os("MSC_REQUIRE_BEAM").is_some();

    let mut trials = Vec::new();
    let mut not_run = Vec::new();
    for suite in SUITES {
        let mut runs_somewhere = false;
        for (place, probe) in &probes {
            let name = format!("{}::{}", suite.name, place.name());
            let why_not = match probe {
                Probe::Missing(why) => Some(why.clone()),
                Probe::Ready(vm) if vm.otp < suite.min_otp => Some(format!(
                    "needs OTP {} or later, the Erlang there is OTP {}",
                    suite.min_otp, vm.otp
                )),
                Probe::Ready(_) => None,
            };
            match (why_not, probe) {
                (None, Probe::Ready(vm)) => {
                    runs_somewhere = true;
                    let (vm, module, after) = (vm.clone(), suite.module, suite.after);
                    trials.push(Trial::test(name, move || {
                        eunit(&vm, module)?;
                        after(&vm)
                    }));
                }
                (why, _) => {
                    let why = why.unwrap_or_default();
                    not_run.push(format!("{name}: {why}"));
                    // Run anyway (`--ignored`), it fails with the reason.
                    trials.push(Trial::test(name, move || Err(why.into())).with_ignored_flag(true));
                }
            }
        }
        if !runs_somewhere {
            not_run.push(format!("{} runs in no Erlang here", suite.name));
        }
    }
    if !not_run.is_empty() {
        eprintln!("BEAM tests not run (reported as ignored):");
        for line in &not_run {
            eprintln!("  {line}");
        }
    }
    if require {
        let missing: Vec<&str> = probes
            .iter()
            .filter_map(|(_, p)| match p {
                Probe::Missing(why) => Some(why.as_str()),
                Probe::Ready(_) => None,
            })
            .collect();
        let nowhere: Vec<&str> = SUITES
            .iter()
            .filter(|s| {
                !probes.iter().any(|(_, p)| matches!(p, Probe::Ready(vm) if vm.otp >= s.min_otp))
            })
            .map(|s| s.name)
            .collect();
        if !missing.is_empty() || !nowhere.is_empty() {
            eprintln!(
                "MSC_REQUIRE_BEAM is set, and the BEAM tests cannot all run: {}",
                missing.iter().chain(&nowhere).copied().collect::<Vec<_>>().join("; ")
            );
            return ExitCode::FAILURE;
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
