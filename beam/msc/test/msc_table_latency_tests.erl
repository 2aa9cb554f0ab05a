%% No msc_table call holds a normal scheduler for long while selects scan
%% 10,000,000 rows, or answer objects of 100,000 terms each: the VM's own
%% long_schedule monitor reports no call that ran 2 ms or more without
%% yielding, and a process pinging another keeps its round trips short.
%%
%% The monitor also reports the VM's own work on a large answer (a major
%% collection of a 10,000,000-element list), with neither place known
%% (`{in, undefined}, {out, undefined}') or placed in this test's own
%% code, where the process happened to be; ets:tab2list/1 of the same
%% table makes such reports too, of up to 47 ms. They are printed, not
%% counted: a library call that held the scheduler is reported in the
%% library, where it returned to.
-module(msc_table_latency_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ROWS, 10000000).
-define(CHUNK, 100000).

latency_test_() ->
    {timeout, 900, fun() ->
        T = msc_table:new(big, [set]),
        fill(T, 1),
        ?assertEqual(?ROWS, msc_table:info(T, size)),
        %% Selective: 0.5% of the rows.
        Spec = [{{'$1', '$2'}, [{'<', '$2', 5}], ['$1']}],
        %% The monitor's reports go to another process: the VM does not
        %% report a process's long schedules to itself.
        Me = self(),
        Collector = spawn_link(fun() -> collect(Me, []) end),
        %% A small table of large objects: few rows, much to build.
        Large = msc_table:new(large, [set]),
        Object = lists:seq(1, 100000),
        msc_table:insert(Large, [{N, Object} || N <- lists:seq(1, 64)]),
        All = [{'_', [], ['$_']}],
        Steps =
            [{select, fun() -> msc_table:select(T, Spec) end, ?ROWS div 200},
             {select_count,
              fun() -> msc_table:select_count(T, [{{'_', '$2'}, [{'<', '$2', 5}], [true]}]) end,
              ?ROWS div 200},
             {tab2list, fun() -> msc_table:tab2list(T) end, ?ROWS},
             {select_3, fun() -> element(1, msc_table:select(T, Spec, 100)) end, 100},
             {large_select, fun() -> msc_table:select(Large, All) end, 64},
             {large_select_3, fun() -> element(1, msc_table:select(Large, All, 64)) end, 64},
             {large_match_object, fun() -> msc_table:match_object(Large, '_') end, 64}],
        {Worst, Results} = while_pinging(fun() ->
            [{Name, step(Collector, Work)} || {Name, Work, _} <- Steps]
        end),
        erlang:system_monitor(undefined),
        ?assertEqual([{Name, N} || {Name, _, N} <- Steps], [{Name, N} || {Name, {N, _, _}} <- Results]),
        Held = [{Name, L} || {Name, {_, L, _}} <- Results, L =/= []],
        Vm = [{Name, L} || {Name, {_, _, L}} <- Results, L =/= []],
        io:format(user, "worst ping round trip during the selects: ~.2f ms; "
                  "long schedules: ~p; the VM's own and this test's: ~p~n", [Worst / 1000, Held, Vm]),
        ?assertEqual([], Held),
        ?assert(Worst < 20000)
    end}.

%% How many rows Work's result has, the long schedules of the calls in it,
%% and those of the VM's own work (neither place known). The rows are
%% counted after the monitor is off: length/1 of 10,000,000 elements does
%% not yield, and would be this test's own long schedule.
step(Collector, Work) ->
    erlang:system_monitor(Collector, [{long_schedule, 2}]),
    Rows = Work(),
    %% The VM reports a long schedule when the process is scheduled out,
    %% which it is in this sleep; the report reaches the collector soon
    %% after, but not in order with this process's own messages.
    timer:sleep(1),
    erlang:system_monitor(undefined),
    Result = if is_list(Rows) -> length(Rows); true -> Rows end,
    timer:sleep(20),
    Collector ! {report, self()},
    Long = receive {long_schedules, L} -> L end,
    %% Reports placed only in this module's own code (or nowhere) are not
    %% the library's: the collection of a large answer lands where the
    %% process happens to be.
    Own = fun(Info) ->
                  lists:all(fun(Key) -> not library(proplists:get_value(Key, Info)) end,
                            [in, out])
          end,
    {Vm, Held} = lists:partition(Own, Long),
    {Result, Held, Vm}.

%% Is the place a long schedule names in the library (not this test)?
library({?MODULE, _, _}) -> false;
library(undefined) -> false;
library(_) -> true.

%% Keeps the long_schedule reports about Pid until asked for them.
collect(Pid, Reports) ->
    receive
        {monitor, Pid, long_schedule, Info} -> collect(Pid, [Info | Reports]);
        {monitor, _, long_schedule, _} -> collect(Pid, Reports);
        {report, Pid} -> Pid ! {long_schedules, lists:reverse(Reports)}, collect(Pid, [])
    end.

fill(_, From) when From > ?ROWS -> ok;
fill(T, From) ->
    msc_table:insert(T, [{N, N rem 1000} || N <- lists:seq(From, From + ?CHUNK - 1)]),
    fill(T, From + ?CHUNK).

%% Runs Work while a process pings an echo process every millisecond;
%% the longest round trip in microseconds, and Work's result.
while_pinging(Work) ->
    Echo = spawn_link(fun Loop() -> receive {ping, From} -> From ! pong, Loop(); stop -> ok end end),
    Parent = self(),
    Pinger = spawn_link(fun() -> ping(Echo, Parent, 0) end),
    timer:sleep(50),
    Result = Work(),
    Pinger ! {stop, self()},
    Worst = receive {worst, W} -> W end,
    Echo ! stop,
    {Worst, Result}.

ping(Echo, Parent, Worst) ->
    receive
        {stop, Parent} -> Parent ! {worst, Worst}
    after 1 ->
        T0 = erlang:monotonic_time(microsecond),
        Echo ! {ping, self()},
        receive pong -> ok end,
        ping(Echo, Parent, max(Worst, erlang:monotonic_time(microsecond) - T0))
    end.
