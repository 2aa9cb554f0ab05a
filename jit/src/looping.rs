//! [`Looping`]: the values the loop over the inputs needs on every trip,
//! kept in SSA variables rather than read from the `Ctx` each time.
//!
//! They are loaded at the entry and stay in registers on trips that call
//! no helper. A call clobbers the caller-saved registers, so a value that
//! lived across one would take a callee-saved register (or a stack slot)
//! from the spec's own values, and the allocator then moves it on every
//! trip; instead they are loaded again right after each call, so none
//! lives across one. (Loading them lazily, where next needed, puts the
//! loads where the paths with and without a call meet: on the hot path.)
//! The count of buffered results is not among them: it changes only when
//! a result is buffered, and as one more value to load after each call it
//! cost `arith`, whose bignum inputs make three calls, more than it saved
//! on loads when buffering.
//!
//! Every reload is a new definition of each value, so every point where
//! paths meet after a call takes them as block parameters: on large
//! programs with many calls that made compiles much slower. A program of
//! more than [`MAX_OPS_IN_REGISTERS`] ops keeps only the input heap's
//! address and length (read by every head op) in variables and reads the
//! count and the inputs' address, once a trip, from the `Ctx` (a spec of
//! 300 clauses, 3,001 ops: 1.78 G -> 1.38 G instructions a compile, the
//! same instructions an event, 270 -> 234 ns an event). On small programs
//! those two loads a trip cost more time than the two reloads they save
//! after each call (tuple_filter 1.11 -> 1.31 ns an event).

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::{FunctionBuilder, Variable};

use crate::abi;

/// A value of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loop {
    /// `Ctx::count` (a helper that panics sets it to 0).
    Count,
    /// `Ctx::inputs`.
    Inputs,
    /// The input heap's address.
    Heap,
    /// The input heap's length, in words.
    HeapLen,
}

impl Loop {
    const ALL: [Loop; 4] = [Loop::Count, Loop::Inputs, Loop::Heap, Loop::HeapLen];

    /// Where the `Ctx` holds it.
    fn offset(self) -> i32 {
        match self {
            Loop::Count => abi::CTX_COUNT,
            Loop::Inputs => abi::CTX_INPUTS,
            Loop::Heap => abi::CTX_INPUT,
            Loop::HeapLen => abi::CTX_INPUT_LEN,
        }
    }
}

/// The most ops a program may have for the count and the inputs' address
/// to be kept in variables too (the benchmarks' largest has 50).
pub(crate) const MAX_OPS_IN_REGISTERS: usize = 256;

/// The loop's values, as variables.
#[derive(Clone, Copy)]
pub(crate) struct Looping {
    ctx: Value,
    vars: [Variable; Loop::ALL.len()],
    /// A large program's: [`Loop::Count`] and [`Loop::Inputs`] are read
    /// from the `Ctx` where used.
    large: bool,
}

impl Looping {
    /// Declares the variables and loads them from `ctx`, for a program of
    /// `ops` ops.
    pub(crate) fn new(b: &mut FunctionBuilder<'_>, ctx: Value, ops: usize) -> Looping {
        let vars = Loop::ALL.map(|_| b.declare_var(types::I64));
        let looping = Looping { ctx, vars, large: ops > MAX_OPS_IN_REGISTERS };
        looping.reload(b);
        looping
    }

    /// The value of `which` here.
    pub(crate) fn get(self, b: &mut FunctionBuilder<'_>, which: Loop) -> Value {
        if self.in_variable(which) {
            b.use_var(self.vars[which as usize])
        } else {
            self.load(b, which)
        }
    }

    /// Loads the values kept in variables from the `Ctx` again: after
    /// every helper call.
    pub(crate) fn reload(self, b: &mut FunctionBuilder<'_>) {
        for which in Loop::ALL {
            if self.in_variable(which) {
                let value = self.load(b, which);
                b.def_var(self.vars[which as usize], value);
            }
        }
    }

    /// Is `which` kept in its variable?
    fn in_variable(self, which: Loop) -> bool {
        match which {
            Loop::Count | Loop::Inputs => !self.large,
            Loop::Heap | Loop::HeapLen => true,
        }
    }

    /// Reads `which` from the `Ctx`.
    fn load(self, b: &mut FunctionBuilder<'_>, which: Loop) -> Value {
        b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, which.offset())
    }
}
