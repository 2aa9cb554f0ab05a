%% No msc_table call holds a normal scheduler for long while selects scan
%% 10,000,000 rows: the VM's own long_schedule monitor reports no call that
%% ran 2 ms or more without yielding, and a process pinging another keeps
%% its round trips short.
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
        erlang:system_monitor(Collector, [{long_schedule, 2}]),
        {Worst, Results} = while_pinging(fun() ->
            [length(msc_table:select(T, Spec)),
             msc_table:select_count(T, [{{'_', '$2'}, [{'<', '$2', 5}], [true]}]),
             length(msc_table:tab2list(T)),
             length(element(1, msc_table:select(T, Spec, 100)))]
        end),
        erlang:system_monitor(undefined),
        Collector ! {report, self()},
        Long = receive {long_schedules, L} -> L end,
        ?assertEqual([?ROWS div 200, ?ROWS div 200, ?ROWS, 100], Results),
        io:format(user, "worst ping round trip during the selects: ~.2f ms; long schedules: ~p~n",
                  [Worst / 1000, Long]),
        ?assertEqual([], Long),
        ?assert(Worst < 20000)
    end}.

%% Keeps the long_schedule reports about Pid until asked for them.
collect(Pid, Reports) ->
    receive
        {monitor, Pid, long_schedule, Info} -> collect(Pid, [Info | Reports]);
        {monitor, _, long_schedule, _} -> collect(Pid, Reports);
        {report, Pid} -> Pid ! {long_schedules, lists:reverse(Reports)}
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
