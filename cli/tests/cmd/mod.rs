//! One file per subcommand, as in `src/cmd/`.

mod bench;
mod dump;
mod etf;
mod fun2ms;
mod parse;
mod run;
mod test;
mod trace;
