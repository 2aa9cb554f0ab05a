%% @private
%% The NIF library (beam/native, built into priv/). Use the modules
%% msc, msc_table and msc_tracer, not this one.
-module(msc_nif).

-export([compile/3, test/3, match_spec_run/2, match_spec_run_dirty/2, info/1]).

-on_load(init/0).

-define(NOT_LOADED, erlang:nif_error({not_loaded, ?MODULE})).

init() ->
    erlang:load_nif(filename:join(priv_dir(), "libmsc_nif"), 0).

%% The application's priv directory: code:priv_dir/1 when the code path
%% names the application (a release, rebar3), else priv/ beside ebin/.
priv_dir() ->
    case code:priv_dir(msc) of
        {error, bad_name} ->
            Ebin = filename:dirname(code:which(?MODULE)),
            filename:join(filename:dirname(Ebin), "priv");
        Dir ->
            Dir
    end.

compile(_Spec, _Kind, _Engine) -> ?NOT_LOADED.
test(_Input, _Spec, _Kind) -> ?NOT_LOADED.
match_spec_run(_List, _Compiled) -> ?NOT_LOADED.
match_spec_run_dirty(_List, _Compiled) -> ?NOT_LOADED.
info(_Compiled) -> ?NOT_LOADED.
