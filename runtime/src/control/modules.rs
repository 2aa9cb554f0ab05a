//! Declaring a module: its functions' entries, and the `on_load` patterns
//! that then apply to it (code loading, as control sees it).

use std::sync::Arc;

use matchspec::term::Atom;

use crate::control::on_load;
use crate::core::TraceCore;
use crate::model::breakpoint::{Function, FunctionEntry};
use crate::model::error::TraceError;
use crate::model::ids::Mfa;

impl TraceCore {
    /// Declares module `module` with `functions`, plus `module_info/0,1`
    /// as every compiled module has. The entries come in that order.
    /// Replacing a module clears its trace patterns, as reloading does in
    /// ERTS; the `on_load` patterns of every session then apply to it.
    pub fn declare_module(
        &self,
        module: Atom,
        functions: &[Function],
    ) -> Result<Vec<Arc<FunctionEntry>>, TraceError> {
        let mut entries: Vec<Arc<FunctionEntry>> = Vec::with_capacity(functions.len() + 2);
        let module_info =
            [Function::exported("module_info", 0), Function::exported("module_info", 1)];
        for &Function { name, arity, exported, bif } in functions.iter().chain(&module_info) {
            let mfa = Mfa { module, function: name, arity };
            if entries.iter().all(|e| e.mfa() != mfa) {
                entries.push(FunctionEntry::new(mfa, exported, bif));
            }
        }
        self.replace_module(module, &entries);
        on_load::apply(self, module)?;
        Ok(entries)
    }
}
