%% msc_tracer: the messages of ERTS's own process tracer, the file format
%% of dbg's trace port, the ring, the filter and every overload policy.
-module(msc_tracer_tests).

-include_lib("eunit/include/eunit.hrl").

-export([work/1, f/1]).

f(X) -> X + 1.

%% Calls f/1 N times, sends itself a message and receives it.
work(N) ->
    [?MODULE:f(I) || I <- lists:seq(1, N)],
    self() ! {note, N},
    receive {note, N} -> ok end.

%% Runs work(N) in a new process traced with TracerOpt; the messages the
%% test process received meanwhile.
traced(TraceWith, N, Flags) ->
    Self = self(),
    P = spawn(fun() -> receive go -> work(N), Self ! {done, self()} end end),
    TraceWith(P, Flags),
    P ! go,
    receive {done, P} -> ok end,
    timer:sleep(20),
    flush().

flush() ->
    receive M -> [M | flush()] after 0 -> [] end.

pattern() ->
    erlang:trace_pattern({?MODULE, f, 1}, [{['$1'], [{'<', '$1', 3}], [{message, {{small, '$1'}}}, {return_trace}]},
                                           {'_', [], []}], [local]).

%% Pids and time stamps differ between two runs; the rest must not.
normal(Messages) ->
    [no_pids(strip_ts(M)) || M <- Messages, is_tuple(M), element(1, M) =/= done].

no_pids(P) when is_pid(P) -> pid;
no_pids([H | T]) -> [no_pids(H) | no_pids(T)];
no_pids(T) when is_tuple(T) -> list_to_tuple(no_pids(tuple_to_list(T)));
no_pids(X) -> X.

strip_ts(M) when element(1, M) =:= trace_ts ->
    list_to_tuple([trace | lists:droplast(tl(tuple_to_list(M)))]);
strip_ts(M) -> M.

same_messages_as_erts_test_() ->
    pattern(),
    Flags = [[call, send, 'receive'], [call, return_to], [procs, send], [call, timestamp],
             [call, send, monotonic_timestamp], [call, strict_monotonic_timestamp]],
    [fun() ->
         Erts = traced(fun(P, F) -> erlang:trace(P, true, [{tracer, self()} | F]) end, 5, Fs),
         {ok, T} = msc_tracer:new({process, self()}, []),
         Msc = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 5, Fs),
         ?assert(length(Erts) >= 2),
         ?assertEqual(normal(Erts), normal(Msc)),
         %% The time stamps are of the same kind.
         ?assertEqual([shape(M) || M <- Erts], [shape(M) || M <- Msc])
     end || Fs <- Flags].

shape(M) when is_tuple(M) -> [shape_of(E) || E <- tuple_to_list(M)];
shape(_) -> other.
shape_of(E) when is_integer(E) -> integer;
shape_of({A, B, C}) when is_integer(A), is_integer(B), is_integer(C) -> timestamp;
shape_of({A, B}) when is_integer(A), is_integer(B) -> strict;
shape_of(_) -> term.

file_sink_is_dbgs_format_test() ->
    pattern(),
    Path = filename:join(os:getenv("MSC_TEST_DATA"), "tracer_file.trace"),
    {ok, T} = msc_tracer:new({file, Path}, []),
    [] = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 50, [call, send]),
    ok = msc_tracer:stop(T),
    #{kept := Kept} = msc_tracer:stats(T),
    Self = self(),
    dbg:trace_client(file, Path, {fun(end_of_trace, N) -> Self ! {read, N}, N;
                                     (M, N) -> Self ! {message, M}, N + 1 end, 0}),
    Read = receive {read, N} -> N after 5000 -> timeout end,
    ?assertEqual(Kept, Read),
    Messages = [M || {message, M} <- flush()],
    Erts = traced(fun(P, F) -> erlang:trace(P, true, [{tracer, self()} | F]) end, 50, [call, send]),
    ?assertEqual(normal(Erts), normal(Messages)),
    %% For the Rust side of the test: how many entries `msc run` must read.
    ok = file:write_file(Path ++ ".count", integer_to_list(Kept)).

ring_and_filter_test() ->
    pattern(),
    Keep = [{{trace, '_', call, '_', '_'}, [], [true]}],
    {ok, T} = msc_tracer:new({ring, 4}, [{filter, Keep}]),
    [] = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 10, [call, send]),
    ?assertEqual([{small, 1}, {small, 2}], msc_tracer:ring_select(T, [{{'_', '_', '_', '_', '$1'}, [], ['$1']}])),
    %% Only two calls carry {message, ...}: their messages are 5-tuples.
    ?assertMatch(#{seen := 14, size := 2, kept := 2, filtered := 12, overwritten := 0}, msc_tracer:stats(T)),
    {ok, T2} = msc_tracer:new({ring, 4}, [{filter, <<"fun({trace, _, call, {_, _, [X]}}) when X > 5 -> X end">>}]),
    [] = traced(fun(P, F) -> msc_tracer:trace(T2, P, F) end, 10, [call]),
    ?assertMatch([{trace, _, call, {?MODULE, f, [7]}} | _], msc_tracer:ring(T2)),
    ?assertMatch(#{size := 4, kept := 5, overwritten := 1}, msc_tracer:stats(T2)),
    ?assertMatch({error, [{error, _, _}]}, msc_tracer:new({ring, 4}, [{filter, [{'_', [], [{nope}]}]}])).

sampling_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    {ok, T} = msc_tracer:new({process, self()}, [{sample, 10}]),
    Got = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 1000, [call]),
    ?assertEqual(100, length(Got)),
    ?assertMatch(#{seen := 1000, kept := 100, sampled_out := 900}, msc_tracer:stats(T)).

max_messages_removes_the_tracer_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    {ok, T} = msc_tracer:new({process, self()}, [{max_messages, 25}]),
    Got = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 1000, [call]),
    ?assertEqual(25, length(Got)),
    ?assertMatch(#{kept := 25, stopped := true}, msc_tracer:stats(T)).

max_time_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    {ok, T} = msc_tracer:new({process, self()}, [{max_time, 0.05}]),
    Self = self(),
    P = spawn(fun() -> receive go -> loop_until(erlang:monotonic_time(millisecond) + 200), Self ! done end end),
    msc_tracer:trace(T, P, [call]),
    P ! go,
    receive done -> ok end,
    Got = flush(),
    #{kept := Kept, stopped := true} = msc_tracer:stats(T),
    ?assertEqual(Kept, length(Got)),
    ?assert(Kept > 0).

loop_until(End) ->
    ?MODULE:f(1),
    case erlang:monotonic_time(millisecond) >= End of
        true -> ok;
        false -> loop_until(End)
    end.

rate_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    {ok, T} = msc_tracer:new({process, self()}, [{rate, 100}]),
    Got = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 5000, [call]),
    %% Within one second: 100 kept, the rest dropped and reported.
    Kept = [M || {trace, _, call, _} = M <- Got],
    ?assertEqual(100, length(Kept)),
    ?assertMatch(#{dropped := 4900}, msc_tracer:stats(T)).

%% A receiver that never reads: its queue stays near the limit, the traced
%% process never waits, drops are counted, and {drop, N} comes first once
%% the receiver catches up.
max_queue_bounds_a_stuck_receiver_test_() ->
    {timeout, 120, fun() ->
        erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
        Self = self(),
        Receiver = spawn(fun() -> receive drain -> Self ! {drained, flush()} end, forward(Self) end),
        {ok, T} = msc_tracer:new({process, Receiver}, [{max_queue, 1000}, {watch_ms, 1}]),
        P = spawn(fun() -> receive go -> work(300000), Self ! done end end),
        msc_tracer:trace(T, P, [call]),
        P ! go,
        receive done -> ok end,
        {message_queue_len, Len} = erlang:process_info(Receiver, message_queue_len),
        #{dropped := Dropped, kept := Kept} = msc_tracer:stats(T),
        io:format(user, "stuck receiver: queue ~w, kept ~w, dropped ~w~n", [Len, Kept, Dropped]),
        ?assert(Len < 100000),
        ?assert(Dropped > 0),
        ?assertEqual(300000, Kept + Dropped),
        Receiver ! drain,
        receive {drained, Msgs} -> ?assertEqual(Len, length(Msgs)) end,
        timer:sleep(50),
        P2 = spawn(fun() -> receive go -> ?MODULE:f(1), Self ! done end end),
        msc_tracer:trace(T, P2, [call]),
        P2 ! go,
        receive done -> ok end,
        timer:sleep(50),
        ?assertMatch([{forwarded, {drop, Dropped}}, {forwarded, {trace, P2, call, _}}], flush()),
        msc_tracer:stop(T)
    end}.

forward(To) ->
    receive M -> To ! {forwarded, M}, forward(To) end.

drop_entries_in_a_file_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    Path = filename:join(os:getenv("MSC_TEST_DATA"), "tracer_drops.trace"),
    {ok, T} = msc_tracer:new({file, Path}, [{rate, 50}]),
    [] = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 1000, [call]),
    timer:sleep(1100),
    [] = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 10, [call]),
    ok = msc_tracer:stop(T),
    Self = self(),
    dbg:trace_client(file, Path, {fun(end_of_trace, N) -> Self ! {read, N}, N;
                                     (M, N) -> Self ! {message, M}, N + 1 end, 0}),
    receive {read, _} -> ok after 5000 -> error(timeout) end,
    Read = [M || {message, M} <- flush()],
    ?assertEqual([{drop, 950}], [M || {drop, _} = M <- Read]),
    ?assertEqual(60, length(Read) - 1).

%% A file sink whose queue is full drops: the file then holds every
%% message it kept and {drop, N} entries for all the others, the last ones
%% written when the tracer stops.
file_queue_drops_are_all_reported_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    Path = filename:join(os:getenv("MSC_TEST_DATA"), "tracer_queue.trace"),
    {ok, T} = msc_tracer:new({file, Path}, [{max_queue, 10}]),
    [] = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 100000, [call]),
    ok = msc_tracer:stop(T),
    #{kept := Kept, dropped := Dropped} = msc_tracer:stats(T),
    ?assert(Dropped > 0),
    ?assertEqual(100000, Kept + Dropped),
    Self = self(),
    dbg:trace_client(file, Path, {fun(end_of_trace, N) -> Self ! {read, N}, N;
                                     (M, N) -> Self ! {message, M}, N + 1 end, 0}),
    receive {read, _} -> ok after 10000 -> error(timeout) end,
    Read = [M || {message, M} <- flush()],
    Drops = lists:sum([N || {drop, N} <- Read]),
    Calls = length([M || {trace, _, call, _} = M <- Read]),
    ?assertEqual({Kept, Dropped}, {Calls, Drops}).

bad_options_are_errors_test_() ->
    [?_assertError(badarg, msc_tracer:new({ring, 4}, [{max_queu, 10}])),
     ?_assertError(badarg, msc_tracer:new({ring, 4}, [{sample, 0}])),
     ?_assertError(badarg, msc_tracer:new({ring, 4}, [{rate, -1}])),
     ?_assertError(badarg, msc_tracer:new({ring, 4}, [{max_time, forever}])),
     ?_assertError(badarg, msc_tracer:new({ring, 0}, [])),
     ?_assertError(badarg, msc_tracer:new({socket, 1}, [])),
     ?_assertError(badarg, msc_tracer:new({ring, 4}, not_a_list)),
     ?_assertMatch({error, {file, _}}, msc_tracer:new({file, "/nonexistent/dir/x.trace"}, []))].

%% The watchdog of a process sink ends when a limit stops the tracer.
watchdog_ends_with_the_tracer_test() ->
    erlang:trace_pattern({?MODULE, f, 1}, true, [local]),
    {ok, {msc_tracer, _, Watchdog} = T} =
        msc_tracer:new({process, self()}, [{max_queue, 100}, {max_messages, 5}, {watch_ms, 1}]),
    ?assert(is_process_alive(Watchdog)),
    Ref = monitor(process, Watchdog),
    Got = traced(fun(P, F) -> msc_tracer:trace(T, P, F) end, 50, [call]),
    ?assertEqual(5, length([M || {trace, _, call, _} = M <- Got])),
    case lists:member({'DOWN', Ref, process, Watchdog, normal}, Got) of
        true -> ok;
        false -> receive {'DOWN', Ref, process, Watchdog, normal} -> ok after 1000 -> error(still_watching) end
    end.
