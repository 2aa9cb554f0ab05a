//! The atoms the NIF returns.

rustler::atoms! {
    ok,
    error,
    badarg,
    system_limit,
    path,
    line,
    column,
    element,
    tail,
    key,
    value,
    raised,
    kind,
    engine,
    jit,
    interp,
    auto,
    native,
    msc,
}
