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

/// The loop's values, as variables.
#[derive(Clone, Copy)]
pub(crate) struct Looping {
    ctx: Value,
    vars: [Variable; Loop::ALL.len()],
}

impl Looping {
    /// Declares the variables and loads them from `ctx`.
    pub(crate) fn new(b: &mut FunctionBuilder<'_>, ctx: Value) -> Looping {
        let vars = Loop::ALL.map(|_| b.declare_var(types::I64));
        let looping = Looping { ctx, vars };
        looping.reload(b);
        looping
    }

    /// The value of `which` here.
    pub(crate) fn get(self, b: &mut FunctionBuilder<'_>, which: Loop) -> Value {
        b.use_var(self.vars[which as usize])
    }

    /// Loads the values from the `Ctx` again: after every helper call.
    pub(crate) fn reload(self, b: &mut FunctionBuilder<'_>) {
        for which in Loop::ALL {
            let value = b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, which.offset());
            b.def_var(self.vars[which as usize], value);
        }
    }
}
