//! The NIFs of the `msc` module: compile, test and run specs.

use msc::matchspec::conformance::{match_spec_test_with, test_config};
use msc::matchspec::fun2ms::is_fun_text;
use msc::matchspec::term::Kind as TermKind;
use msc::{Engine, Heap, Kind, Run, Scratch, Spec, TestHost};
use rustler::{Binary, Encoder, Env, Error, NifResult, ResourceArc, Term};

use crate::atoms;
use crate::convert::{export, import};
use crate::error::errors_term;

/// A compiled spec held by the VM: freed when no process refers to it.
pub struct Compiled {
    spec: Spec,
}

#[rustler::resource_impl]
impl rustler::Resource for Compiled {}

impl Compiled {
    /// The spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }
}

/// The event kind named by the atom `kind`.
fn kind_of(kind: Term<'_>) -> NifResult<Kind> {
    let name = kind.atom_to_string().map_err(|_| Error::BadArg)?;
    Kind::from_name(&name).ok_or(Error::BadArg)
}

fn engine_of(engine: Term<'_>) -> NifResult<Engine> {
    let name = engine.atom_to_string().map_err(|_| Error::BadArg)?;
    name.parse().map_err(|_| Error::BadArg)
}

/// Compiles a spec given as a term, or as text (spec or fun) in a binary.
pub fn build_spec(
    spec: Term<'_>,
    kind: Kind,
    engine: Engine,
) -> NifResult<Result<Spec, msc::CompileError>> {
    let builder = Spec::builder().engine(engine).config(crate::release::config());
    if let Ok(text) = Binary::from_term(spec) {
        let text = std::str::from_utf8(text.as_slice()).map_err(|_| Error::BadArg)?;
        return Ok(if is_fun_text(text) {
            builder.build_fun(text, kind, &[])
        } else {
            builder.build(text, kind)
        });
    }
    let mut heap = Heap::new();
    let root = import(spec, &mut heap).map_err(import_error)?;
    Ok(builder.build_from_term(heap.view(root), kind))
}

/// `msc:compile/3`: `{ok, Compiled}` or `{error, Errors}`. Compiling to
/// machine code can take most of a millisecond, so this runs on a dirty
/// scheduler.
#[rustler::nif(name = "nif_compile", schedule = "DirtyCpu")]
fn compile<'a>(
    env: Env<'a>,
    spec: Term<'a>,
    kind: Term<'a>,
    engine: Term<'a>,
) -> NifResult<Term<'a>> {
    let kind = kind_of(kind)?;
    let engine = engine_of(engine)?;
    Ok(match build_spec(spec, kind, engine)? {
        Ok(spec) => (atoms::ok(), ResourceArc::new(Compiled { spec })).encode(env),
        Err(e) => (atoms::error(), errors_term(env, &e)).encode(env),
    })
}

/// `msc:test/3`: what `erlang:match_spec_test/3` returns in this VM's
/// release, with `{raised, Class, Reason}` where it raises.
#[rustler::nif(name = "nif_test", schedule = "DirtyCpu")]
fn test<'a>(env: Env<'a>, input: Term<'a>, spec: Term<'a>, kind: Term<'a>) -> NifResult<Term<'a>> {
    let kind = kind_of(kind)?;
    let mut heap = Heap::new();
    let input = import(input, &mut heap).map_err(import_error)?;
    let spec = import(spec, &mut heap).map_err(import_error)?;
    let mut host = caller_host(env)?;
    let answer = match_spec_test_with(
        heap.view(input),
        heap.view(spec),
        kind,
        &test_config().release(crate::release::release()),
        &mut host,
        |spec| spec,
    );
    export(env, answer.as_ref()).map_err(export_error)
}

/// `match_spec_test`'s process, as the NIF's caller: `{self}` is the
/// caller's pid, and that pid names the process.
pub fn caller_host(env: Env<'_>) -> NifResult<TestHost> {
    let mut heap = Heap::new();
    let word = import(env.pid().encode(env), &mut heap).map_err(import_error)?;
    match heap.view(word).kind() {
        TermKind::Pid(pid) => Ok(TestHost { pid, ..TestHost::default() }),
        _ => Err(Error::BadArg),
    }
}

/// `msc:match_spec_run/2` on a short list (a normal scheduler).
#[rustler::nif(name = "nif_match_spec_run")]
fn match_spec_run<'a>(
    env: Env<'a>,
    list: Term<'a>,
    compiled: ResourceArc<Compiled>,
) -> NifResult<Term<'a>> {
    run_list(env, list, &compiled)
}

/// `msc:match_spec_run/2` on a long list (a dirty scheduler).
#[rustler::nif(name = "nif_match_spec_run_dirty", schedule = "DirtyCpu")]
fn match_spec_run_dirty<'a>(
    env: Env<'a>,
    list: Term<'a>,
    compiled: ResourceArc<Compiled>,
) -> NifResult<Term<'a>> {
    run_list(env, list, &compiled)
}

/// What `ets:match_spec_run/2` returns: the result of each element a
/// clause matches, in order.
fn run_list<'a>(env: Env<'a>, list: Term<'a>, compiled: &Compiled) -> NifResult<Term<'a>> {
    let spec = compiled.spec();
    if spec.kind() != Kind::Table {
        return Err(Error::BadArg);
    }
    let mut heap = Heap::new();
    let mut scratch = Scratch::new();
    let mut host = caller_host(env)?;
    let mut results = Vec::new();
    let mut rest = list;
    while let Ok((element, tail)) = rest.list_get_cell() {
        heap.clear();
        let input = import(element, &mut heap).map_err(import_error)?;
        let outcome = spec.run(heap.view(input), &mut scratch, &mut host);
        if let Ok(outcome) = outcome
            && let Some(result) = outcome.result()
        {
            results.push(export(env, result).map_err(export_error)?);
        }
        rest = tail;
    }
    if !rest.is_empty_list() {
        return Err(Error::BadArg);
    }
    Ok(results.encode(env))
}

/// `msc:info/1`: the kind, the engine, whether it runs as machine code, and
/// the OTP release whose answers it gives.
#[rustler::nif(name = "nif_info")]
fn info<'a>(env: Env<'a>, compiled: ResourceArc<Compiled>) -> NifResult<Term<'a>> {
    let spec = compiled.spec();
    let kind = rustler::Atom::from_str(env, spec.kind().name())?;
    let engine = rustler::Atom::from_str(env, spec.engine().name())?;
    let pairs = [
        (atoms::kind().encode(env), kind.encode(env)),
        (atoms::engine().encode(env), engine.encode(env)),
        (atoms::native().encode(env), spec.is_compiled().encode(env)),
        (atoms::otp().encode(env), spec.compiled().program().release().major().encode(env)),
    ];
    Term::map_from_pairs(env, &pairs).map_err(|_| Error::BadArg)
}

/// Raises `system_limit` (msc's atom table is full) or `badarg`.
pub fn import_error(e: crate::convert::ImportError) -> Error {
    match e {
        crate::convert::ImportError::AtomTableFull => Error::RaiseAtom("system_limit"),
        crate::convert::ImportError::Unsupported(_) | crate::convert::ImportError::Unreadable => {
            Error::BadArg
        }
    }
}

/// Raises `{msc, Reason}`, Reason a string: a result the VM cannot hold.
pub fn export_error(e: crate::convert::ExportError) -> Error {
    Error::RaiseTerm(Box::new((atoms::msc(), e.0)))
}

/// Panics on purpose: the test that a Rust panic in a NIF is an Erlang
/// exception (`nif_panicked`), never a crashed VM.
#[rustler::nif(name = "nif_panic")]
fn panic_on_purpose() -> bool {
    panic!("msc_tracer:nif_panic/0 panics on purpose")
}
