//! The helper table: every function the machine code may call, declared
//! once ([`helpers!`]): its symbol, its address, its parameters and
//! whether it may build terms. The helpers themselves are in `abi.rs`
//! (shims over the interpreter's frame) and in `lean.rs` and `arith.rs`.

use std::ffi::c_void;

use crate::{abi, arith, lean};

/// A helper the machine code may call: its symbol, address and number of
/// `u64` parameters after `ctx` (every helper returns one `u64`).
pub(crate) struct Helper {
    pub(crate) name: &'static str,
    pub(crate) address: *const u8,
    pub(crate) params: usize,
}

/// Declares the helper table once: [`HelperId`], [`HelperId::ALL`],
/// [`HelperId::may_build`] and [`HelperId::helper`]. Each row names the
/// helper's parameters after `ctx`, all `u64`; the row's function is
/// coerced to exactly that type, so a row whose parameters disagree with
/// its function does not compile, and the arity the machine code is
/// declared with is counted from them.
macro_rules! helpers {
    ($(
        $(#[doc = $doc:literal])*
        $id:ident = $name:literal ($($param:ident),*) => $function:path, $builds:literal;
    )*) => {
        /// Which helper: one row of the `helpers!` table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum HelperId {
            $($(#[doc = $doc])* $id,)*
        }

        impl HelperId {
            /// Every helper, in `HelperId` order.
            pub(crate) const ALL: [HelperId; [$(stringify!($id)),*].len()] =
                [$(HelperId::$id),*];

            /// May the helper build terms (and so move the heap)?
            pub(crate) fn may_build(self) -> bool {
                match self {
                    $(HelperId::$id => $builds,)*
                }
            }

            /// The helper's row.
            pub(crate) fn helper(self) -> Helper {
                match self {
                    $(HelperId::$id => {
                        let function: unsafe extern "C" fn(*mut c_void $(, helpers!(@u64 $param))*) -> u64 =
                            $function;
                        Helper {
                            name: $name,
                            address: function as *const u8,
                            params: [$(stringify!($param)),*].len(),
                        }
                    })*
                }
            }
        }
    };
    (@u64 $param:ident) => { u64 };
}

helpers! {
    /// Runs one op with the interpreter's code (`Frame::step`).
    Step = "msc_step"(pc) => abi::step, true;
    /// Calls a guard function.
    Call = "msc_call"(bif, a, b, c) => abi::call, true;
    /// Compares two terms in Erlang's term order.
    Compare = "msc_compare"(op, x, y) => abi::compare, false;
    /// A type test the machine code does not decide from tags.
    TypeTest = "msc_type_test"(test, w) => abi::type_test, false;
    /// `=:=` of two terms that are not both immediates.
    ExactEq = "msc_exact_eq"(a, b) => abi::exact_eq, false;
    /// A head's map lookup of a key the code does not find inline.
    MapValue = "msc_map_value"(map, key) => lean::map_value, false;
    /// Builds a tuple of registers.
    MakeTuple = "msc_make_tuple"(start, len) => abi::make_tuple, true;
    /// Builds a proper list of registers.
    MakeList = "msc_make_list"(start, len) => abi::make_list, true;
    /// Builds one cons cell.
    MakeCons = "msc_make_cons"(head, tail) => abi::make_cons, true;
    /// Loads an input into register 0 (a trace event's arguments too).
    Reset = "msc_reset"(input) => abi::reset, true;
    /// `+` on numbers that are not both small integers.
    NumAdd = "msc_num_add"(x, y, at) => arith::num_add, true;
    /// `-` on numbers that are not both small integers.
    NumSub = "msc_num_sub"(x, y, at) => arith::num_sub, true;
    /// `*` on numbers that are not both small integers.
    NumMul = "msc_num_mul"(x, y, at) => arith::num_mul, true;
    /// `/` on numbers.
    NumDiv = "msc_num_div"(x, y, at) => arith::num_div, true;
    /// An order comparison of numbers that are not both small integers.
    NumCompare = "msc_num_compare"(op, x, y) => lean::num_compare, false;
    /// A guard's lookup in a small map (`map_get`, `is_map_key`).
    MapGet = "msc_map_get"(bif, key, map) => lean::map_get, true;
    /// `+` fused into the comparison that reads its result.
    NumAddCompare = "msc_num_add_compare"(op, x, y, at, other) => arith::num_add_compare, true;
    /// `-` fused into the comparison that reads its result.
    NumSubCompare = "msc_num_sub_compare"(op, x, y, at, other) => arith::num_sub_compare, true;
    /// `*` fused into the comparison that reads its result.
    NumMulCompare = "msc_num_mul_compare"(op, x, y, at, other) => arith::num_mul_compare, true;
    /// `/` fused into the comparison that reads its result.
    NumDivCompare = "msc_num_div_compare"(op, x, y, at, other) => arith::num_div_compare, true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every helper is in the table once, in `ALL` order.
    #[test]
    fn helpers_are_listed_in_order() {
        for (i, id) in HelperId::ALL.iter().enumerate() {
            assert_eq!(*id as usize, i);
        }
        let names: std::collections::HashSet<_> =
            HelperId::ALL.iter().map(|id| id.helper().name).collect();
        assert_eq!(names.len(), HelperId::ALL.len());
    }
}
