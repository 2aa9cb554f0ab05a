%% @doc An erl_tracer whose callbacks are msc NIFs, with sinks and overload
%% policies that never make a traced process wait.
%%
%% Sinks: `{process, Pid}' (the messages erl_tracer would send),
%% `{file, Path}' (dbg:trace_port(file, Path)'s format: read it with
%% dbg:trace_client/3 or `msc run --format dbg'), `{ring, Size}' (the
%% latest Size messages, read with ring/1 and queried with ring_select/2).
%%
%% Options:
%% <ul>
%% <li>`{filter, Spec}': keep only messages a table match spec (a term,
%%     or text or a fun in a binary) matches, run over the whole message;</li>
%% <li>`{max_queue, N}': a process sink's queue (checked every
%%     `{watch_ms, Ms}', default 10) or a file sink's write queue holds
%%     at most about N messages; the rest are dropped, counted and reported
%%     as `{drop, Count}' before the next message delivered;</li>
%% <li>`{rate, PerSecond}': keep at most that many messages a second;</li>
%% <li>`{sample, N}': keep one event in N;</li>
%% <li>`{max_messages, N}', `{max_time, Seconds}': stop after that many
%%     messages or that long (the tracer then asks ERTS to remove it).</li>
%% </ul>
%%
%% This module also holds the NIF library of the msc application (a NIF
%% library belongs to one module, and erl_tracer callbacks must be NIFs of
%% the tracer module itself); the `nif_' functions are internal.
%%
%% ```
%% 1> {ok, T} = msc_tracer:new({file, "/tmp/calls.trace"}, [{rate, 10000}]).
%% 2> msc_tracer:trace(T, all, [call]), erlang:trace_pattern({lists, seq, 2}, true, []).
%% 3> lists:seq(1, 3), msc_tracer:stop(T).
%% '''
-module(msc_tracer).

-export([new/2, trace/3, tracer/1, stop/1, stats/1, ring/1, ring_select/2,
         start_cluster/4, stop_cluster/1]).
%% erl_tracer callbacks (NIFs).
-export([enabled/3, trace/5]).
%% The NIFs of msc and msc_table.
-export([nif_compile/3, nif_test/3, nif_match_spec_run/2, nif_match_spec_run_dirty/2,
         nif_info/1, nif_table_new/2, nif_table_live_count/0, nif_table_insert/2,
         nif_table_insert_dirty/2, nif_table_insert_new/2, nif_table_insert_new_dirty/2, nif_table_lookup/2,
         nif_table_lookup_dirty/2, nif_table_delete_dirty/2, nif_table_delete_object_dirty/2,
         nif_table_delete/2, nif_table_delete_object/2, nif_table_select/2,
         nif_table_select_dirty/2, nif_table_select_limit/5, nif_table_select_limit_dirty/5, nif_table_count/3,
         nif_table_count_dirty/3, nif_table_to_list/1, nif_table_info/2,
         nif_table_fix/4, nif_table_fixed/2, nif_panic/0]).
-export([nif_tracer_new/7, nif_tracer_congested/2, nif_tracer_stop/1, nif_tracer_stats/1,
         nif_tracer_ring/1, nif_tracer_ring_select/2]).
-export_type([tracer/0]).

-on_load(init/0).

-opaque tracer() :: {msc_tracer, reference(), pid() | undefined}.

-define(NOT_LOADED, erlang:nif_error({not_loaded, ?MODULE})).

init() ->
    %% The NIF gives this release's answers.
    Release = list_to_binary(erlang:system_info(otp_release)),
    erlang:load_nif(filename:join(priv_dir(), "libmsc_nif"), Release).

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

%% ---------------------------------------------------------------------------
%% API

%% @doc A new tracer. See the module documentation for sinks and options.
-spec new({process, pid()} | {file, file:filename()} | {ring, pos_integer()}, [term()]) ->
    {ok, tracer()} | {error, term()}.
new(Sink, Opts) when is_list(Opts) ->
    [erlang:error(badarg, [Sink, Opts]) || Opt <- Opts, not valid_option(Opt)],
    NifSink = case Sink of
                  {process, Pid} when is_pid(Pid), node(Pid) =:= node() -> Sink;
                  {file, Path} -> {file, unicode:characters_to_binary(Path)};
                  {ring, Size} when is_integer(Size), Size > 0 -> Sink;
                  _ -> erlang:error(badarg, [Sink, Opts])
              end,
    Get = fun(Key, Default) -> case lists:keyfind(Key, 1, Opts) of {Key, V} -> V; false -> Default end end,
    MaxTime = case Get(max_time, undefined) of
                  undefined -> undefined;
                  Secs when is_number(Secs), Secs >= 0 -> round(Secs * 1000);
                  _ -> erlang:error(badarg, [Sink, Opts])
              end,
    MaxQueue = Get(max_queue, undefined),
    case nif_tracer_new(NifSink, Get(filter, undefined), Get(sample, undefined),
                        Get(max_messages, undefined), MaxTime, Get(rate, undefined), MaxQueue) of
        {ok, Ref} ->
            Watchdog = case {Sink, MaxQueue} of
                           {{process, Receiver}, N} when is_integer(N) ->
                               spawn(fun() -> watch(Ref, Receiver, N, Get(watch_ms, 10)) end);
                           _ ->
                               undefined
                       end,
            {ok, {msc_tracer, Ref, Watchdog}};
        {error, _} = Error ->
            Error
    end;
new(Sink, Opts) ->
    erlang:error(badarg, [Sink, Opts]).

%% Every option is known and has a value it can take: a misspelt option is
%% an error, never quietly ignored.
valid_option({filter, _}) -> true;
valid_option({Count, N}) when Count =:= sample; Count =:= max_messages; Count =:= rate;
                              Count =:= max_queue; Count =:= watch_ms ->
    is_integer(N) andalso N > 0;
valid_option({max_time, Seconds}) -> is_number(Seconds) andalso Seconds >= 0;
valid_option(_) -> false.

%% @doc The `{tracer, Module, State}' pair for erlang:trace/3 and friends.
-spec tracer(tracer()) -> {tracer, module(), reference()}.
tracer({msc_tracer, Ref, _}) -> {tracer, ?MODULE, Ref}.

%% @doc erlang:trace(PidPortSpec, true, [Tracer | Flags]).
-spec trace(tracer(), pid() | port() | all | processes | ports | existing | new, [atom()]) -> integer().
trace(Tracer, PidPortSpec, Flags) ->
    {tracer, Module, State} = tracer(Tracer),
    erlang:trace(PidPortSpec, true, [{tracer, Module, State} | Flags]).

%% @doc Stops the tracer (ERTS removes it at the next event); a file sink
%% writes what it holds and closes.
-spec stop(tracer()) -> ok | {error, term()}.
stop({msc_tracer, Ref, Watchdog}) ->
    case Watchdog of
        undefined -> ok;
        _ -> Watchdog ! stop
    end,
    nif_tracer_stop(Ref).

%% @doc The counters: events `seen', messages `kept', `filtered',
%% `sampled_out' and `dropped'; `stopped'; a ring's `size' and
%% `overwritten'; a file's `bytes'.
-spec stats(tracer()) -> #{atom() => term()}.
stats({msc_tracer, Ref, _}) -> nif_tracer_stats(Ref).

%% @doc A ring sink's messages, oldest first.
-spec ring(tracer()) -> [tuple()].
ring({msc_tracer, Ref, _}) -> nif_tracer_ring(Ref).

%% @doc The result of each message in a ring sink a clause of the table
%% match spec `Spec' matches, oldest first.
-spec ring_select(tracer(), term()) -> [term()].
ring_select({msc_tracer, Ref, _}, Spec) -> nif_tracer_ring_select(Ref, Spec).

%% Polls the receiver's queue length and tells the tracer when it is over
%% the limit, so the traced processes drop instead of flooding it. Ends
%% with the tracer: on stop/1, when a limit stopped it, or when the
%% receiver is gone (which stops it).
watch(Ref, Receiver, Max, Ms) ->
    Congested = case erlang:process_info(Receiver, message_queue_len) of
                    {message_queue_len, Len} -> Len >= Max;
                    undefined -> nif_tracer_stop(Ref), exit(normal)
                end,
    nif_tracer_congested(Ref, Congested),
    case nif_tracer_stats(Ref) of
        #{stopped := true} -> ok;
        _ ->
            receive stop -> ok
            after Ms -> watch(Ref, Receiver, Max, Ms)
            end
    end.

%% ---------------------------------------------------------------------------
%% Across a cluster

%% @doc Starts a file tracer on each node of `Nodes' (through erpc), each
%% writing `Dir/<node>.trace', and traces `PidSpec' with `Flags' there.
%% Every node must have the msc application in its code path. Returns the
%% tracers to stop with stop_cluster/1, or the nodes that failed.
-spec start_cluster([node()], file:filename(), term(), {[atom()], [term()]}) ->
    {ok, [{node(), tracer()}]} | {error, [{node(), term()}]}.
start_cluster(Nodes, Dir, PidSpec, {Flags, Opts}) ->
    Results = erpc:multicall(Nodes, fun() ->
        Path = filename:join(Dir, atom_to_list(node()) ++ ".trace"),
        {ok, T} = new({file, Path}, Opts),
        trace(T, PidSpec, Flags),
        T
    end),
    Pairs = lists:zip(Nodes, Results),
    case [{N, R} || {N, {Class, R}} <- Pairs, Class =/= ok] of
        [] -> {ok, [{N, T} || {N, {ok, T}} <- Pairs]};
        Failed -> {error, Failed}
    end.

%% @doc Stops the tracers of start_cluster/4; their files are complete
%% when it returns.
-spec stop_cluster([{node(), tracer()}]) -> [{node(), ok | {error, term()}}].
stop_cluster(Tracers) ->
    [{Node, erpc:call(Node, ?MODULE, stop, [T])} || {Node, T} <- Tracers].

%% ---------------------------------------------------------------------------
%% NIFs

enabled(_TraceTag, _TracerState, _Tracee) -> ?NOT_LOADED.
trace(_TraceTag, _TracerState, _Tracee, _TraceTerm, _Opts) -> ?NOT_LOADED.

nif_compile(_Spec, _Kind, _Engine) -> ?NOT_LOADED.
nif_test(_Input, _Spec, _Kind) -> ?NOT_LOADED.
nif_match_spec_run(_List, _Compiled) -> ?NOT_LOADED.
nif_match_spec_run_dirty(_List, _Compiled) -> ?NOT_LOADED.
nif_info(_Compiled) -> ?NOT_LOADED.
nif_table_new(_Type, _Keypos) -> ?NOT_LOADED.
nif_table_live_count() -> ?NOT_LOADED.
nif_table_insert(_T, _Objects) -> ?NOT_LOADED.
nif_table_insert_dirty(_T, _Objects) -> ?NOT_LOADED.
nif_table_insert_new(_T, _Objects) -> ?NOT_LOADED.
nif_table_insert_new_dirty(_T, _Objects) -> ?NOT_LOADED.
nif_table_lookup(_T, _Key) -> ?NOT_LOADED.
nif_table_lookup_dirty(_T, _Key) -> ?NOT_LOADED.
nif_table_delete_dirty(_T, _Key) -> ?NOT_LOADED.
nif_table_delete_object_dirty(_T, _Object) -> ?NOT_LOADED.
nif_panic() -> ?NOT_LOADED.
nif_table_delete(_T, _Key) -> ?NOT_LOADED.
nif_table_delete_object(_T, _Object) -> ?NOT_LOADED.
nif_table_select(_T, _Spec) -> ?NOT_LOADED.
nif_table_select_dirty(_T, _Spec) -> ?NOT_LOADED.
nif_table_select_limit(_T, _Spec, _Shard, _Slot, _Limit) -> ?NOT_LOADED.
nif_table_select_limit_dirty(_T, _Spec, _Shard, _Slot, _Limit) -> ?NOT_LOADED.
nif_table_count(_T, _Spec, _Op) -> ?NOT_LOADED.
nif_table_count_dirty(_T, _Spec, _Op) -> ?NOT_LOADED.
nif_table_to_list(_T) -> ?NOT_LOADED.
nif_table_info(_T, _Item) -> ?NOT_LOADED.
nif_table_fix(_T, _Fix, _Monotonic, _Timestamp) -> ?NOT_LOADED.
nif_table_fixed(_T, _Item) -> ?NOT_LOADED.
nif_tracer_new(_Sink, _Filter, _Sample, _MaxMessages, _MaxTimeMs, _Rate, _MaxQueue) -> ?NOT_LOADED.
nif_tracer_congested(_T, _Congested) -> ?NOT_LOADED.
nif_tracer_stop(_T) -> ?NOT_LOADED.
nif_tracer_stats(_T) -> ?NOT_LOADED.
nif_tracer_ring(_T) -> ?NOT_LOADED.
nif_tracer_ring_select(_T, _Spec) -> ?NOT_LOADED.
