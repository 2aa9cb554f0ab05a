/*
 * tracer_test: the erl_tracer NIF module OTP's tracer_SUITE uses
 * (erts/emulator/test/tracer_SUITE_data/tracer_test.c, OTP 27.3), written
 * again for the scenario generator. msc's runtime::tracer::TestTracerModule
 * makes the same decisions.
 *
 * The tracer state is a tuple {Decisions, Collector, Extra}:
 *
 *   enabled(Tag, State, Tracee)
 *       State not a tuple              -> discard
 *       Decisions has the key Tag      -> its value, whatever it is
 *                                         (trace, discard, remove, ...)
 *       otherwise (also: not a map)    -> discard
 *
 *   trace(Tag, State, Tracee, Msg, Opts)
 *       sends {Tag, State, Tracee, Msg, Opts} -- the five arguments as they
 *       are -- to Collector, and returns ok. It does not look at Decisions.
 *
 * Where OTP's file reads memory it does not own (a state that is an empty
 * tuple or no tuple at all in trace/5, a Collector that is not a local pid)
 * this one answers discard or sends nothing. No scenario gets there.
 *
 * Built by generate.sh against the chroot's erl_nif.h (package erlang-dev)
 * and loaded by run-scenario.escript as module tracer_test.
 */

#include <erl_nif.h>

static ERL_NIF_TERM atom_discard;
static ERL_NIF_TERM atom_ok;

static int
tt_load(ErlNifEnv *env, void **priv_data, ERL_NIF_TERM load_info)
{
    (void)load_info;
    atom_discard = enif_make_atom(env, "discard");
    atom_ok = enif_make_atom(env, "ok");
    *priv_data = NULL;
    return 0;
}

static int
tt_upgrade(ErlNifEnv *env, void **priv_data, void **old_priv_data,
           ERL_NIF_TERM load_info)
{
    (void)old_priv_data;
    return tt_load(env, priv_data, load_info);
}

/* enabled(Tag, State, Tracee) */
static ERL_NIF_TERM
tt_enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    const ERL_NIF_TERM *state;
    int arity;
    ERL_NIF_TERM decision;

    (void)argc;
    if (!enif_get_tuple(env, argv[1], &arity, &state) || arity < 1)
        return atom_discard;
    if (!enif_get_map_value(env, state[0], argv[0], &decision))
        return atom_discard;
    return decision;
}

/* trace(Tag, State, Tracee, Msg, Opts) */
static ERL_NIF_TERM
tt_trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    const ERL_NIF_TERM *state;
    int arity;
    ErlNifPid collector;

    if (enif_get_tuple(env, argv[1], &arity, &state) && arity >= 2
        && enif_get_local_pid(env, state[1], &collector)) {
        ERL_NIF_TERM msg = enif_make_tuple_from_array(env, argv, (unsigned)argc);
        (void)enif_send(env, &collector, NULL, msg);
    }
    return atom_ok;
}

static ErlNifFunc tt_funcs[] = {
    {"enabled", 3, tt_enabled, 0},
    {"trace", 5, tt_trace, 0},
};

ERL_NIF_INIT(tracer_test, tt_funcs, tt_load, NULL, tt_upgrade, NULL)
