//! Reading what commands work on: files, standard input, inline terms.

use std::io::Read;

use matchspec::Release;
use matchspec::fun2ms::{Dialect, fun2ms_with_syntax};
use matchspec::spec::Kind;
use matchspec::syntax::{Step, Syntax};
use matchspec::term::Term;
use matchspec::{CompileError, CompiledSpec, Config};
use std::sync::OnceLock;

use crate::CliError;

/// How the process reads Erlang text: the syntax of the `--otp` release
/// (OTP 29 reads based floats, OTP 27 does not). Set once, at start.
static SYNTAX: OnceLock<Syntax> = OnceLock::new();

/// Reads every input with the syntax of `release` from now on.
pub(crate) fn set_release(release: Release) {
    let _ = SYNTAX.set(Syntax::of(release));
}

/// The syntax inputs are read with.
pub(crate) fn syntax() -> Syntax {
    SYNTAX.get().copied().unwrap_or_default()
}

/// Reads `path` (`-` is standard input) as bytes.
pub(crate) fn read_bytes(path: &str) -> Result<Vec<u8>, CliError> {
    let io = |source| CliError::Io { path: path.to_owned(), source };
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(io)?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(io)
    }
}

/// Reads `path` (`-` is standard input) as UTF-8 text.
pub(crate) fn read_text(path: &str) -> Result<String, CliError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| CliError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

/// A term given on the command line: inline text, or `@FILE` to read it
/// from a file. Returns the term and the text it was parsed from.
pub(crate) fn term_arg(arg: &str) -> Result<(Term, String), CliError> {
    let (path, text) = arg_text(arg)?;
    let term = syntax().parse_term(&text).map_err(|source| CliError::Parse { path, source })?;
    Ok((term, text))
}

/// A spec as commands take it: the text of a match spec, and the kind if
/// it was given as `{Kind, MatchSpec}` (as the benchmark workloads' `.ms`
/// files write them); or the text of a fun, which `fun2ms` translates for
/// the kind.
#[derive(Debug)]
pub(crate) struct SpecText {
    /// The text: a match spec, ready for
    /// [`matchspec::CompiledSpec::compile`], or a fun.
    text: String,
    /// The kind the text named, if it did.
    pub(crate) kind: Option<Kind>,
    /// Is the text a fun?
    fun: bool,
    /// Where the text came from.
    path: String,
}

impl SpecText {
    /// The kind to compile for: `given` (from `--kind`) first, then the
    /// one the text named, then `table`.
    pub(crate) fn kind_or(&self, given: Option<Kind>) -> Kind {
        given.or(self.kind).unwrap_or(Kind::Table)
    }

    /// The match spec's text for `kind`: a fun is translated as
    /// `ets:fun2ms/1` (table) or `dbg:fun2ms/1` (trace kinds) would.
    pub(crate) fn spec_for(&self, kind: Kind) -> Result<String, CliError> {
        if !self.fun {
            return Ok(self.text.clone());
        }
        fun_spec(&self.text, kind).map(|spec| spec.to_string())
    }

    /// Compiles the spec for `kind` with `config`.
    pub(crate) fn compile(&self, kind: Kind, config: &Config) -> Result<CompiledSpec, CliError> {
        if self.fun {
            return compile_fun(&self.text, kind, &[], config);
        }
        Ok(CompiledSpec::compile(&self.text, kind, config)?)
    }

    /// Where the text came from (`<argument>` for inline text).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }
}

/// Is `text` a fun (its first token `fun`, after white space and comments)?
pub(crate) fn is_fun(text: &str) -> bool {
    matchspec::fun2ms::is_fun_text(text)
}

/// Compiles a fun for `kind`: errors point into the fun, and a spec ERTS
/// rejects is shown too.
pub(crate) fn compile_fun(
    text: &str,
    kind: Kind,
    bindings: &[(&str, Term)],
    config: &Config,
) -> Result<CompiledSpec, CliError> {
    let text = without_final_dot(text);
    CompiledSpec::from_fun(text, kind, bindings, config).map_err(|e| match e {
        CompileError::Fun(e) => CliError::Fun2ms(e),
        CompileError::Spec(errors) => match fun_spec(text, kind) {
            Ok(spec) => CliError::Fun2msCheck { spec: spec.to_string(), kind: kind.name(), errors },
            Err(e) => e,
        },
        other => CliError::Compile(other),
    })
}

/// A fun's text without the `.` a file may end it with (a spec file's
/// term has one; the fun itself, an expression, has none).
pub(crate) fn without_final_dot(text: &str) -> &str {
    let trimmed = text.trim_end();
    match trimmed.strip_suffix('.') {
        Some(rest) if !rest.ends_with('.') => rest,
        _ => text,
    }
}

/// The spec a fun translates to for `kind` (no bindings).
pub(crate) fn fun_spec(text: &str, kind: Kind) -> Result<Term, CliError> {
    let dialect = if kind == Kind::Table { Dialect::Table } else { Dialect::Trace };
    fun2ms_with_syntax(without_final_dot(text), dialect, &[], syntax())
        .map(|(spec, _)| spec)
        .map_err(CliError::Fun2ms)
}

/// A spec given on the command line: inline text or `@FILE`, either a
/// match spec or `{Kind, MatchSpec}`.
pub(crate) fn spec_arg(arg: &str) -> Result<SpecText, CliError> {
    let (path, text) = arg_text(arg)?;
    spec_text(&path, text)
}

/// A spec file (`-` is standard input): a match spec or `{Kind, MatchSpec}`.
pub(crate) fn spec_file(path: &str) -> Result<SpecText, CliError> {
    spec_text(path, read_text(path)?)
}

/// The path and text of an argument that is inline text or `@FILE`.
fn arg_text(arg: &str) -> Result<(String, String), CliError> {
    Ok(match arg.strip_prefix('@') {
        Some(path) => (path.to_owned(), read_text(path)?),
        None => ("<argument>".to_owned(), arg.to_owned()),
    })
}

/// Recognises `{Kind, MatchSpec}` in `text`. A 2-tuple with an atom first
/// is never a match spec, so an atom that names no kind is an error rather
/// than a spec for the checker to reject.
fn spec_text(path: &str, text: String) -> Result<SpecText, CliError> {
    if is_fun(&text) {
        return Ok(SpecText { text, kind: None, fun: true, path: path.to_owned() });
    }
    let (term, map) = syntax()
        .parse_term_with_spans(&text)
        .map_err(|source| CliError::Parse { path: path.to_owned(), source })?;
    let named = term.as_ref().as_tuple().filter(|t| t.len() == 2).and_then(|t| t.get(0)?.as_atom());
    let Some(name) = named else {
        return Ok(SpecText { text, kind: None, fun: false, path: path.to_owned() });
    };
    let kind = Kind::from_name(name.name())
        .ok_or_else(|| CliError::UnknownKind { path: path.to_owned(), name: name.to_string() })?;
    // Blank out what comes before the match spec, keeping line breaks, and
    // drop what follows it, so that spec errors point at their line and
    // column in the original text.
    let spec = map.span_of(term.as_ref(), &[Step::Element(1)]).unwrap_or_else(|| map.root());
    let (start, end) = (spec.start as usize, spec.end as usize);
    let text = text[..start]
        .chars()
        .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
        .chain(text[start..end].chars())
        .collect();
    Ok(SpecText { text, kind: Some(kind), fun: false, path: path.to_owned() })
}
