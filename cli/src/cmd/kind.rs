//! `--kind`: the event kind a spec is checked and run for.

use matchspec::spec::Kind;

/// The kinds `--kind` can name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KindArg {
    /// ETS (`ets:select/2`): the input is one term.
    #[default]
    Table,
    /// Call trace (`trace` works too): the input is the argument list.
    #[value(alias = "trace")]
    Call,
    /// Send trace: the input is `[Receiver, Msg]`.
    Send,
    /// Receive trace: the input is `[Node, Sender, Msg]`.
    Receive,
}

impl From<KindArg> for Kind {
    fn from(arg: KindArg) -> Kind {
        match arg {
            KindArg::Table => Kind::Table,
            KindArg::Call => Kind::Call,
            KindArg::Send => Kind::Send,
            KindArg::Receive => Kind::Receive,
        }
    }
}
