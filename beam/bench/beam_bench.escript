#!/usr/bin/env escript
%%! -noshell +sbwt none
%% The msc application against ERTS, in one VM:
%%   escript beam/bench/beam_bench.escript [table|tracer|overload|all] [Rows]
%% Build first (beam/build.sh). Each figure is the median of 5 runs after a
%% warm-up run; tables print ns per row, tracers ns per traced call.
-mode(compile).
-export([f/1]).

main(Args) ->
    Ebin = filename:join([filename:dirname(filename:absname(escript:script_name())), "..", "ebin"]),
    true = code:add_patha(Ebin),
    {module, _} = code:ensure_loaded(msc_tracer),
    {What, Rows} = case Args of
                       [] -> {all, 1000000};
                       [W] -> {list_to_atom(W), 1000000};
                       [W, R] -> {list_to_atom(W), list_to_integer(R)}
                   end,
    io:format("OTP ~s, ~w schedulers~n", [erlang:system_info(otp_release), erlang:system_info(schedulers)]),
    [table(Rows) || What =:= all orelse What =:= table],
    [tracer(Rows) || What =:= all orelse What =:= tracer],
    [overload(2 * Rows) || What =:= all orelse What =:= overload],
    ok.

%% ---------------------------------------------------------------------------
%% Tables

table(Rows) ->
    Objects = [{N, N rem 1000, <<"payload">>} || N <- lists:seq(1, Rows)],
    Ets = ets:new(bench, [set, public, {read_concurrency, true}]),
    true = ets:insert(Ets, Objects),
    Msc = msc_table:new(bench, [set]),
    true = msc_table:insert(Msc, Objects),
    io:format("~n~w rows {N, N rem 1000, <<\"payload\">>}~n", [Rows]),
    io:format("memory per row: ets ~.1f bytes, msc_table ~.1f bytes~n",
              [ets:info(Ets, memory) * 8 / Rows, msc_table:info(Msc, memory) * 8 / Rows]),
    io:format("~-34s ~12s ~12s ~8s~n", ["operation (selectivity)", "ets ns/row", "msc ns/row", "ets/msc"]),
    [begin
         Select = [{{'$1', '$2', '_'}, [{'<', '$2', Limit}], ['$1']}],
         Count = [{{'_', '$2', '_'}, [{'<', '$2', Limit}], [true]}],
         {ok, SelectC} = msc:compile(Select, table, [{engine, jit}]),
         {ok, CountC} = msc:compile(Count, table, [{engine, jit}]),
         Label = fun(Op) -> io_lib:format("~s (~s)", [Op, Pct]) end,
         row(Label(select), Rows, fun() -> ets:select(Ets, Select) end,
             fun() -> msc_table:select(Msc, SelectC) end),
         row(Label(select_count), Rows, fun() -> ets:select_count(Ets, Count) end,
             fun() -> msc_table:select_count(Msc, CountC) end),
         %% select_delete on the long-lived table: the deleted rows are put
         %% back (untimed) before each run.
         Doomed = [O || {_, V, _} = O <- Objects, V < Limit],
         row(Label(select_delete), Rows,
             {fun() -> ets:insert(Ets, Doomed), Ets end, fun(E) -> ets:select_delete(E, Count) end},
             {fun() -> msc_table:insert(Msc, Doomed), Msc end, fun(M) -> msc_table:select_delete(M, CountC) end}),
         %% ... and on a table just filled, a fresh copy each run.
         row(Label("select_delete, new table"), Rows,
             {fun() -> E = ets:new(c, [set, public]), ets:insert(E, Objects), E end,
              fun(E) -> ets:select_delete(E, Count) end},
             {fun() -> M = msc_table:new(c, [set]), msc_table:insert(M, Objects), M end,
              fun(M) -> msc_table:select_delete(M, CountC) end})
     end || {Limit, Pct} <- [{5, "0.5%"}, {500, "50%"}]],
    ok.

row(Label, Rows, Ets, Msc) ->
    E = median_us(Ets) * 1000 / Rows,
    M = median_us(Msc) * 1000 / Rows,
    io:format("~-34s ~12.2f ~12.2f ~7.1fx~n", [Label, E, M, E / M]).

%% Median of 5 timed runs after one warm-up, in microseconds.
median_us({Setup, Run}) ->
    Times = [begin
                 S = Setup(),
                 {Us, _} = timer:tc(fun() -> Run(S) end),
                 Us
             end || _ <- lists:seq(1, 6)],
    median(tl(Times));
median_us(Run) ->
    median_us({fun() -> none end, fun(_) -> Run() end}).

median(L) -> lists:nth((length(L) + 1) div 2, lists:sort(L)).

%% ---------------------------------------------------------------------------
%% Tracers: ns per traced call

f(X) -> X.

loop(0) -> ok;
loop(N) -> ?MODULE:f(N), loop(N - 1).

traced_loop(Calls, Setup, Teardown) ->
    Self = self(),
    Times = [begin
                 State = Setup(),
                 P = spawn(fun() -> receive go -> ok end, {Us, _} = timer:tc(fun() -> loop(Calls) end), Self ! {us, Us} end),
                 trace_it(State, P),
                 P ! go,
                 Us = receive {us, T} -> T end,
                 Teardown(State),
                 Us
             end || _ <- lists:seq(1, 6)],
    median(tl(Times)) * 1000 / Calls.

trace_it(State, P) ->
    %% dbg:stop/0 clears trace patterns: set it again for every run.
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    trace_with(State, P).

trace_with({untraced, _}, _) -> ok;
trace_with({erts, Sink}, P) -> erlang:trace(P, true, [call, {tracer, Sink}]);
trace_with({dbg, _}, P) ->
    %% From OTP 27 dbg traces in a session of its own: its pattern too.
    {ok, _} = dbg:tpl(?MODULE, f, 1, []),
    {ok, [{matched, _, 1}]} = dbg:p(P, [call]);
trace_with({msc, T}, P) -> 1 = msc_tracer:trace(T, P, [call]).

sink() -> spawn(fun Drain() -> receive stop -> ok; _ -> Drain() end end).

tracer(Rows) ->
    Calls = Rows,
    File = "/tmp/msc_beam_bench.trace",
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    io:format("~n~w traced calls (call trace, no match spec)~n", [Calls]),
    Base = traced_loop(Calls, fun() -> {untraced, none} end, fun(_) -> ok end),
    %% Every case must see every call (checked on the file and ring sinks).
    Cases =
        [{"ERTS process tracer", fun() -> {erts, sink()} end, fun({_, S}) -> S ! stop end},
         {"dbg file port", fun() ->
              {ok, _} = dbg:tracer(port, dbg:trace_port(file, File)), {dbg, none} end,
          fun(_) -> dbg:stop() end},
         {"msc_tracer process sink", fun() -> {ok, T} = msc_tracer:new({process, sink()}, []), {msc, T} end,
          fun({_, T}) -> msc_tracer:stop(T) end},
         {"msc_tracer file sink", fun() -> {ok, T} = msc_tracer:new({file, File}, []), {msc, T} end,
          fun({_, T}) -> msc_tracer:stop(T) end},
         {"msc_tracer ring sink (65536)", fun() -> {ok, T} = msc_tracer:new({ring, 65536}, []), {msc, T} end,
          fun({_, T}) -> msc_tracer:stop(T) end},
         {"msc_tracer, all sampled out", fun() -> {ok, T} = msc_tracer:new({ring, 1}, [{sample, 1 bsl 40}]), {msc, T} end,
          fun({_, T}) -> msc_tracer:stop(T) end},
         {"msc_tracer file, filter 1%", fun() ->
              {ok, T} = msc_tracer:new({file, File}, [{filter, [{{trace, '_', call, {'_', '_', ['$1']}}, [{'=:=', {'rem', '$1', 100}, 0}], [true]}]}]),
              {msc, T} end,
          fun({_, T}) -> msc_tracer:stop(T) end}],
    io:format("~-32s ~14s~n", ["tracer", "ns/call"]),
    io:format("~-32s ~14.1f~n", ["untraced loop", Base]),
    [io:format("~-32s ~14.1f~n", [Name, traced_loop(Calls, Setup, Down) - Base]) || {Name, Setup, Down} <- Cases],
    file:delete(File),
    ok.

%% ---------------------------------------------------------------------------
%% Overload: a receiver that never reads

overload(Calls) ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    io:format("~n~w traced calls into a process sink that never reads~n", [Calls]),
    io:format("~-28s ~12s ~12s ~14s~n", ["policy", "kept", "dropped", "node memory"]),
    [begin
         erlang:garbage_collect(),
         Before = erlang:memory(total),
         Stuck = spawn(fun() -> receive stop -> ok end end),
         {ok, T} = msc_tracer:new({process, Stuck}, Opts),
         Self = self(),
         P = spawn(fun() -> receive go -> loop(Calls), Self ! done end end),
         msc_tracer:trace(T, P, [call]),
         P ! go,
         receive done -> ok end,
         After = erlang:memory(total),
         #{kept := Kept, dropped := Dropped} = msc_tracer:stats(T),
         io:format("~-28s ~12w ~12w ~11.1f MB~n", [Name, Kept, Dropped, (After - Before) / 1.0e6]),
         msc_tracer:stop(T),
         Ref = monitor(process, Stuck),
         exit(Stuck, kill),
         receive {'DOWN', Ref, process, Stuck, _} -> ok end,
         timer:sleep(200)
     end || {Name, Opts} <- [{"unbounded", []},
                             {"{max_queue, 10000}", [{max_queue, 10000}, {watch_ms, 1}]},
                             {"{rate, 100000}", [{rate, 100000}]},
                             {"{sample, 100}", [{sample, 100}]},
                             {"{max_messages, 10000}", [{max_messages, 10000}]}]],
    ok.
