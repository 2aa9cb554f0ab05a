%% @doc Match specifications compiled and run by msc: exactly OTP 27's
%% answers, on an interpreter or as native code.
%%
%% ```
%% 1> {ok, C} = msc:compile([{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}], table).
%% 2> msc:match_spec_run([{apple, 150}, {pear, 20}], C).
%% [apple]
%% 3> msc:test([a, b], [{['$1', '_'], [], [{message, '$1'}]}], trace).
%% {ok,a,[],[]}
%% '''
-module(msc).

-export([compile/2, compile/3, test/3, match_spec_run/2, info/1]).
-export_type([compiled/0, kind/0, engine/0, error_info/0]).

-opaque compiled() :: reference().
%% A compiled spec: freed when nothing refers to it.
-type kind() :: table | trace | call | send | 'receive'.
%% `trace' is `call', as in erlang:match_spec_test/3.
-type engine() :: jit | interp | auto.
-type error_info() ::
    {error, Message :: string(), #{path => [step()], line => pos_integer(),
                                   column => pos_integer()}}.
%% Message is the text erlang:match_spec_test/3 gives. `path' leads from the
%% spec to the offending part; `line' and `column' are given when the spec
%% was text.
-type step() :: {element, pos_integer()} | {tail, non_neg_integer()}
              | {key, pos_integer()} | {value, pos_integer()}.

%% Lists longer than this are run on a dirty scheduler.
-define(DIRTY_RUN_LENGTH, 1000).

%% @equiv compile(Spec, Kind, [])
-spec compile(Spec :: term() | binary(), kind()) ->
    {ok, compiled()} | {error, [error_info()]}.
compile(Spec, Kind) ->
    compile(Spec, Kind, []).

%% @doc Checks and compiles `Spec' for events of `Kind'. `Spec' is a match
%% spec, or its text, or the text of a fun (as ets:fun2ms/1 or dbg:fun2ms/1
%% would translate it) in a binary. Options: `{engine, jit | interp |
%% auto}' (default `auto': interpret first, compile to machine code once the
%% spec has run often enough to pay for it).
-spec compile(Spec :: term() | binary(), kind(), [{engine, engine()}]) ->
    {ok, compiled()} | {error, [error_info()]}.
compile(Spec, Kind, Opts) when is_list(Opts) ->
    %% A misspelt option is an error, never quietly ignored.
    [erlang:error(badarg, [Spec, Kind, Opts]) || Opt <- Opts, not is_tuple(Opt) orelse element(1, Opt) =/= engine],
    msc_tracer:nif_compile(Spec, Kind, option(engine, Opts, auto));
compile(Spec, Kind, Opts) ->
    erlang:error(badarg, [Spec, Kind, Opts]).

%% @doc What erlang:match_spec_test/3 of OTP 27 returns, on any OTP: `{ok,
%% Result, Flags, Warnings}' or `{error, Errors}'. Raises where it raises.
-spec test(Input :: term(), Spec :: term(), kind()) ->
    {ok, term(), [return_trace | exception_trace], []} | {error, [{error, string()}]}.
test(Input, Spec, Kind) ->
    case msc_tracer:nif_test(Input, Spec, Kind) of
        {raised, Class, Reason} -> erlang:raise(Class, Reason, [{?MODULE, test, [Input, Spec, Kind], []}]);
        Answer -> Answer
    end.

%% @doc What ets:match_spec_run/2 returns: the result of each element of
%% `List' a clause matches, in order. `Compiled' must be a `table' spec.
-spec match_spec_run([term()], compiled()) -> [term()].
match_spec_run(List, Compiled) when is_list(List) ->
    case shorter_than(List, ?DIRTY_RUN_LENGTH) of
        true -> msc_tracer:nif_match_spec_run(List, Compiled);
        false -> msc_tracer:nif_match_spec_run_dirty(List, Compiled)
    end;
match_spec_run(List, Compiled) ->
    erlang:error(badarg, [List, Compiled]).

%% @doc The kind, the engine, whether the spec runs as machine code now,
%% and the OTP release whose answers it gives: this VM's (27 for OTP 25 to
%% 28, 29 from OTP 29 on; docs/releases.md).
-spec info(compiled()) ->
    #{kind := kind(), engine := engine(), native := boolean(), otp := 27 | 29}.
info(Compiled) ->
    msc_tracer:nif_info(Compiled).

option(Key, Opts, Default) ->
    case lists:keyfind(Key, 1, Opts) of
        {Key, Value} -> Value;
        false -> Default
    end.

shorter_than([_ | T], N) when N > 0 -> shorter_than(T, N - 1);
shorter_than([], _) -> true;
shorter_than(_, _) -> false.
