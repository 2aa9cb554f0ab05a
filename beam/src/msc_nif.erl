%% @private
%% The NIF library (beam/native, built into priv/). Use the modules
%% msc, msc_table and msc_tracer, not this one.
-module(msc_nif).

-export([compile/3, test/3, match_spec_run/2, match_spec_run_dirty/2, info/1]).
-export([table_new/2, table_live_count/0, table_insert/2, table_insert_dirty/2,
         table_insert_new/2, table_lookup/2, table_delete/2, table_delete_object/2,
         table_select/2, table_select_dirty/2, table_select_limit/5, table_count/3,
         table_count_dirty/3, table_to_list/1, table_info/2]).

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

table_new(_Type, _Keypos) -> ?NOT_LOADED.
table_live_count() -> ?NOT_LOADED.
table_insert(_T, _Objects) -> ?NOT_LOADED.
table_insert_dirty(_T, _Objects) -> ?NOT_LOADED.
table_insert_new(_T, _Objects) -> ?NOT_LOADED.
table_lookup(_T, _Key) -> ?NOT_LOADED.
table_delete(_T, _Key) -> ?NOT_LOADED.
table_delete_object(_T, _Object) -> ?NOT_LOADED.
table_select(_T, _Spec) -> ?NOT_LOADED.
table_select_dirty(_T, _Spec) -> ?NOT_LOADED.
table_select_limit(_T, _Spec, _Shard, _Slot, _Limit) -> ?NOT_LOADED.
table_count(_T, _Spec, _Op) -> ?NOT_LOADED.
table_count_dirty(_T, _Spec, _Op) -> ?NOT_LOADED.
table_to_list(_T) -> ?NOT_LOADED.
table_info(_T, _Item) -> ?NOT_LOADED.
