%% What ets promises under concurrency, msc_table keeps, under the same
%% load in the same VM: an insert/2 or insert_new/2 of a list is seen whole
%% or not at all by every kind of read, a select/3 walk returns objects that
%% stay in the table exactly once while others insert and delete, and
%% safe_fixtable/2 and info/2 answer as ets's do.
-module(msc_table_concurrency_tests).

-include_lib("eunit/include/eunit.hrl").

-define(SEEDS, 6).
-define(RUN_MS, 500).

%% ---------------------------------------------------------------------------
%% Isolation of list inserts

%% A writer inserts the same keys again and again, each list one
%% generation; readers must never get two generations from one call.
insert_is_isolated_test_() ->
    {timeout, 120, fun() ->
        [begin
             rand:seed(exsss, {Seed, 7, 11}),
             Size = 50 + rand:uniform(250),
             Ets = torn_reads(ets, Size),
             Msc = torn_reads(msc_table, Size),
             io:format(user, "seed ~w, ~w objects a list: torn reads ets ~w, msc_table ~w "
                       "(of ~w and ~w reads)~n",
                       [Seed, Size, element(1, Ets), element(1, Msc), element(2, Ets),
                        element(2, Msc)]),
             ?assert(element(2, Msc) > 0),
             ?assertEqual(0, element(1, Msc))
         end || Seed <- lists:seq(1, ?SEEDS)],
        ok
    end}.

%% {Torn, Reads} of a run: the writer replaces objects {K, G} for K in
%% 1..Size with generation G + 1, readers read as many ways as there are.
torn_reads(Module, Size) ->
    T = new(Module),
    Module:insert(T, generation(Size, 0)),
    Writer = spawn_link(fun() -> write_generations(Module, T, Size, 1) end),
    Readers = [spawn_monitor(fun() -> exit({reads, read_loop(Module, T, Size, Way, 0, 0)}) end)
               || Way <- [select, tab2list, match_object, chunk, lookup]],
    timer:sleep(?RUN_MS),
    unlink(Writer),
    exit(Writer, kill),
    Results = [receive {'DOWN', Ref, process, Pid, {reads, R}} -> R end
               || {Pid, Ref} <- Readers],
    {lists:sum([Torn || {Torn, _} <- Results]), lists:sum([N || {_, N} <- Results])}.

generation(Size, G) -> [{K, G} || K <- lists:seq(1, Size)].

write_generations(Module, T, Size, G) ->
    Module:insert(T, generation(Size, G)),
    write_generations(Module, T, Size, G + 1).

read_loop(Module, T, Size, Way, Torn, Reads) ->
    case get(stop_at) of
        undefined -> put(stop_at, erlang:monotonic_time(millisecond) + ?RUN_MS - 50);
        _ -> ok
    end,
    case erlang:monotonic_time(millisecond) > get(stop_at) of
        true ->
            {Torn, Reads};
        false ->
            Objects = read(Module, T, Size, Way),
            Gens = lists:usort([G || {_, G} <- Objects]),
            read_loop(Module, T, Size, Way, Torn + min(1, length(Gens) - 1), Reads + 1)
    end.

read(Module, T, _, select) -> Module:select(T, [{'_', [], ['$_']}]);
read(Module, T, _, tab2list) -> Module:tab2list(T);
read(Module, T, _, match_object) -> Module:match_object(T, {'_', '_'});
read(Module, T, Size, chunk) ->
    %% One chunk of a select/3: whatever part of the table it sees.
    case Module:select(T, [{'_', [], ['$_']}], max(1, Size div 3)) of
        {Objects, _} -> Objects;
        '$end_of_table' -> []
    end;
read(Module, T, Size, lookup) ->
    %% One key: trivially whole, but it must always be there.
    [_] = Module:lookup(T, rand:uniform(Size)).

%% insert_new/2 of a list: the newest generation a read sees is complete
%% (older ones are being deleted one key at a time).
insert_new_is_isolated_test_() ->
    {timeout, 120, fun() ->
        [begin
             Ets = partial_news(ets),
             Msc = partial_news(msc_table),
             io:format(user, "insert_new: partial reads ets ~w, msc_table ~w (of ~w and ~w)~n",
                       [element(1, Ets), element(1, Msc), element(2, Ets), element(2, Msc)]),
             ?assertEqual(0, element(1, Msc))
         end || _ <- lists:seq(1, 3)],
        ok
    end}.

partial_news(Module) ->
    T = new(Module),
    Writer = spawn_link(fun() -> insert_news(Module, T, 1) end),
    Parent = self(),
    Readers = [spawn_link(fun() -> Parent ! {self(), check_news(Module, T, 0, 0)} end)
               || _ <- [1, 2]],
    Results = [receive {R, Result} -> Result end || R <- Readers],
    unlink(Writer),
    exit(Writer, kill),
    {lists:sum([P || {P, _} <- Results]), lists:sum([N || {_, N} <- Results])}.

insert_news(Module, T, G) ->
    true = Module:insert_new(T, [{{G, K}, G} || K <- lists:seq(1, 100)]),
    [Module:delete(T, {G - 1, K}) || K <- lists:seq(1, 100)],
    insert_news(Module, T, G + 1).

check_news(_, _, Partial, 2000) ->
    {Partial, 2000};
check_news(Module, T, Partial, Reads) ->
    Objects = Module:select(T, [{'_', [], ['$_']}]),
    Newest = lists:max([0 | [G || {_, G} <- Objects]]),
    Complete = Newest =:= 0 orelse length([G || {_, G} <- Objects, G =:= Newest]) =:= 100,
    check_news(Module, T, Partial + case Complete of true -> 0; false -> 1 end, Reads + 1).

%% select_replace/2 is atomic per object: a lookup never misses the key.
select_replace_is_atomic_per_object_test_() ->
    {timeout, 60, fun() ->
        T = msc_table:new(t, [set]),
        msc_table:insert(T, generation(500, 0)),
        Bump = [{{'$1', '$2'}, [], [{{'$1', {'+', '$2', 1}}}]}],
        Writer = spawn_link(fun Loop() -> 500 = msc_table:select_replace(T, Bump), Loop() end),
        Missing = length([K || _ <- lists:seq(1, 5000), K <- [rand:uniform(500)],
                               msc_table:lookup(T, K) =:= []]),
        unlink(Writer),
        exit(Writer, kill),
        ?assertEqual(0, Missing)
    end}.

%% ---------------------------------------------------------------------------
%% Traversal under churn

%% 5,000 stable objects walked by select/3 with limit 50 while two
%% processes insert and delete other keys: msc_table returns each stable
%% object exactly once, fixed or not; ets does only when fixed (its
%% unfixed walks are reported, not judged).
traversal_under_churn_test_() ->
    {timeout, 120, fun() ->
        [begin
             {Missed, Repeated} = walk_under_churn(Module, Fix),
             io:format(user, "~w~s: ~w stable objects missed, ~w repeated in 10 walks~n",
                       [Module, case Fix of true -> " (fixed)"; false -> "" end,
                        Missed, Repeated]),
             case {Module, Fix} of
                 {ets, false} -> ok;
                 _ -> ?assertEqual({0, 0}, {Missed, Repeated})
             end
         end || {Module, Fix} <- [{ets, false}, {ets, true}, {msc_table, false},
                                  {msc_table, true}]],
        ok
    end}.

walk_under_churn(Module, Fix) ->
    T = new(Module),
    Module:insert(T, [{K, stable} || K <- lists:seq(1, 5000)]),
    Churners = [spawn_link(fun() -> churn(Module, T, W, 0) end) || W <- [1, 2]],
    Spec = [{{'$1', stable}, [], ['$1']}],
    Walks = [begin
                 Fix andalso Module:safe_fixtable(T, true),
                 Keys = walk(Module, Module:select(T, Spec, 50), []),
                 Fix andalso Module:safe_fixtable(T, false),
                 Keys
             end || _ <- lists:seq(1, 10)],
    [begin unlink(C), exit(C, kill) end || C <- Churners],
    Missed = lists:sum([5000 - length(lists:usort(Keys)) || Keys <- Walks]),
    Repeated = lists:sum([length(Keys) - length(lists:usort(Keys)) || Keys <- Walks]),
    {Missed, Repeated}.

walk(_, '$end_of_table', Acc) -> Acc;
walk(Module, {Keys, Cont}, Acc) -> walk(Module, Module:select(Cont), Keys ++ Acc).

churn(Module, T, W, N) ->
    Key = {churn, W, N rem 3000},
    case N rem 2 of
        0 -> Module:insert(T, {Key, churn});
        1 -> Module:delete(T, Key)
    end,
    churn(Module, T, W, N + 1).

%% ---------------------------------------------------------------------------
%% safe_fixtable/2 and info/2

safe_fixtable_answers_as_ets_test() ->
    [begin
         T = new(Module),
         ?assertEqual(false, Module:info(T, safe_fixed)),
         ?assertEqual(false, Module:info(T, fixed)),
         true = Module:safe_fixtable(T, true),
         true = Module:safe_fixtable(T, true),
         {{_, _, _}, [{Me, 2}]} = Module:info(T, safe_fixed),
         ?assertEqual(self(), Me),
         {Mono, [{Me, 2}]} = Module:info(T, safe_fixed_monotonic_time),
         ?assert(is_integer(Mono)),
         ?assertEqual(true, Module:info(T, fixed)),
         %% Another process's fixation counts apart, and goes when it exits.
         Parent = self(),
         Other = spawn(fun() ->
                           Module:safe_fixtable(T, true),
                           Parent ! fixed,
                           receive go -> ok end
                       end),
         receive fixed -> ok end,
         {_, Two} = Module:info(T, safe_fixed),
         ?assertEqual(lists:sort([{Me, 2}, {Other, 1}]), lists:sort(Two)),
         Ref = monitor(process, Other),
         Other ! go,
         receive {'DOWN', Ref, process, Other, _} -> ok end,
         wait_until(fun() -> element(2, Module:info(T, safe_fixed)) =:= [{Me, 2}] end),
         true = Module:safe_fixtable(T, false),
         {_, [{Me, 1}]} = Module:info(T, safe_fixed),
         true = Module:safe_fixtable(T, false),
         ?assertEqual(false, Module:info(T, safe_fixed)),
         %% Releasing a fixation it does not hold changes nothing.
         true = Module:safe_fixtable(T, false),
         ?assertEqual(false, Module:info(T, safe_fixed))
     end || Module <- [ets, msc_table]],
    ?assertError(badarg, msc_table:safe_fixtable(make_ref(), true)),
    ?assertError(badarg, msc_table:safe_fixtable(msc_table:new(t, []), yes)).

wait_until(Done) ->
    case Done() of
        true -> ok;
        false -> timer:sleep(1), wait_until(Done)
    end.

new(ets) -> ets:new(t, [set, public]);
new(msc_table) -> msc_table:new(t, [set]).
