%% The msc module: compile, test, match_spec_run and terms across the NIF.
-module(msc_tests).

-include_lib("eunit/include/eunit.hrl").

-define(BIG_SPEC, [{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]).

compile_and_run_test() ->
    {ok, C} = msc:compile(?BIG_SPEC, table),
    ?assertEqual([apple, plum], msc:match_spec_run([{apple, 150}, {pear, 20}, {plum, 300}, x], C)).

engines_test_() ->
    [?_assertMatch(#{kind := table, engine := E, native := Native},
                   begin {ok, C} = msc:compile(?BIG_SPEC, table, [{engine, E}]), msc:info(C) end)
     || {E, Native} <- [{jit, true}, {interp, false}, {auto, false}]].

every_engine_agrees_test() ->
    Rows = [{N, N * 7 rem 211} || N <- lists:seq(1, 5000)],
    Answers = [begin {ok, C} = msc:compile(?BIG_SPEC, table, [{engine, E}]),
                     msc:match_spec_run(Rows, C) end || E <- [jit, interp, auto]],
    ?assertEqual(1, length(lists:usort(Answers))),
    ?assertEqual(length([x || {_, V} <- Rows, V > 100]), length(hd(Answers))).

%% The VM's release decides the answers: OTP 29's prefix heads compile
%% in OTP 29 and later only.
release_of_this_vm_test() ->
    Otp = list_to_integer(erlang:system_info(otp_release)),
    Release = if Otp >= 29 -> 29; true -> 27 end,
    {ok, C} = msc:compile(?BIG_SPEC, table),
    ?assertMatch(#{otp := Release}, msc:info(C)),
    Prefix = msc:test([a, b], [{['$1' | '_'], [], [{message, '$1'}]}], trace),
    case Release of
        29 -> ?assertMatch({ok, a, [], []}, Prefix);
        27 -> ?assertMatch({error, [{error, "Match expression part" ++ _}]}, Prefix)
    end.

errors_have_paths_test() ->
    ?assertEqual({error, [{error, "Function foo/0 does_not_exist.",
                           #{path => [{element, 1}, {element, 2}, {element, 1}]}}]},
                 msc:compile([{'_', [{foo}], [x]}], table)).

errors_in_text_have_lines_test() ->
    {error, [{error, _, Where}]} = msc:compile(<<"[{'_',\n  [{foo}], [x]}]">>, table),
    ?assertMatch(#{line := 2, column := 4}, Where).

syntax_errors_test() ->
    ?assertMatch({error, [{error, _, #{line := 1, column := _}}]},
                 msc:compile(<<"[{'_', [], [x]}">>, table)).

funs_test() ->
    {ok, C} = msc:compile(<<"fun({K, V}) when V > 100 -> K end">>, table),
    ?assertEqual([apple], msc:match_spec_run([{apple, 150}, {pear, 20}], C)),
    ?assertMatch({error, [{error, "fun containing the local function call 'make_ref/0'" ++ _,
                           #{line := 1, column := _}}]},
                 msc:compile(<<"fun(X) -> make_ref() end">>, table)).

trace_kinds_test() ->
    Spec = [{['$1', '_'], [{is_atom, '$1'}], [{message, '$1'}, {return_trace}]}],
    ?assertEqual({ok, a, [return_trace], []}, msc:test([a, b], Spec, trace)),
    ?assertEqual({ok, a, [return_trace], []}, msc:test([a, b], Spec, call)),
    ?assertEqual({ok, false, [], []}, msc:test([1, b], Spec, trace)).

self_is_the_caller_test() ->
    ?assertEqual({ok, self(), [], []}, msc:test([], [{[], [], [{message, {self}}]}], trace)).

test_raises_as_match_spec_test_does_test() ->
    ?assertError(badarg, msc:test(not_a_list, [{'_', [], [true]}], trace)).

bad_arguments_test_() ->
    {ok, Trace} = msc:compile([{'_', [], [true]}], trace),
    {ok, Table} = msc:compile(?BIG_SPEC, table),
    [?_assertError(badarg, msc:compile(?BIG_SPEC, tabel)),
     ?_assertError(badarg, msc:compile(?BIG_SPEC, table, [{engine, fast}])),
     ?_assertError(badarg, msc:compile(?BIG_SPEC, table, nope)),
     ?_assertError(badarg, msc:compile(?BIG_SPEC, table, [{engin, jit}])),
     ?_assertError(badarg, msc:compile(<<255, 0>>, table)),
     ?_assertError(badarg, msc:match_spec_run([{a, 1}], Trace)),
     ?_assertError(badarg, msc:match_spec_run([{a, 1} | b], Table)),
     ?_assertError(badarg, msc:match_spec_run(nope, Table)),
     ?_assertError(badarg, msc:match_spec_run([], make_ref())),
     ?_assertError(badarg, msc:test([], [{'_', [], [true]}], tabel))].

%% Every kind of term comes back as itself.
terms_survive_test() ->
    {ok, C} = msc:compile([{'$1', [], ['$1']}], table),
    Port = hd(erlang:ports()),
    Terms = [self(), make_ref(), Port, fun(X) -> X + 1 end, fun lists:map/2,
             1 bsl 200, -(1 bsl 70), 1 bsl 59, -(1 bsl 59), 0.5, -0.0, 1.0e300,
             <<1:3>>, <<>>, <<"bytes">>, binary:copy(<<7>>, 100000),
             'ünïcödé', '', 'with space', "text", [1 | 2], [], {}, #{},
             #{a => 1, {k} => [v], 1.0 => 1, 1 => 1.0},
             maps:from_list([{N, N} || N <- lists:seq(1, 100)]),
             {nested, [#{k => <<"v">>}, {self(), [make_ref()]}]}],
    ?assertEqual(Terms, msc:match_spec_run(Terms, C)),
    [?assert(R =:= T) || {R, T} <- lists:zip(msc:match_spec_run(Terms, C), Terms)].

deep_terms_test_() ->
    {timeout, 60, fun() ->
        {ok, C} = msc:compile([{'$1', [], ['$1']}], table),
        Deep = lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, 1000000)),
        DeepTuple = lists:foldl(fun(_, A) -> {A} end, x, lists:seq(1, 1000000)),
        ?assert([Deep, DeepTuple] =:= msc:match_spec_run([Deep, DeepTuple], C))
    end}.

long_lists_run_dirty_test() ->
    {ok, C} = msc:compile(?BIG_SPEC, table, [{engine, jit}]),
    Rows = [{N, N rem 1000} || N <- lists:seq(1, 100000)],
    Expected = [K || {K, V} <- Rows, V > 100],
    ?assertEqual(Expected, msc:match_spec_run(Rows, C)).

compiled_specs_are_shared_test() ->
    {ok, C} = msc:compile(?BIG_SPEC, table),
    Parent = self(),
    Pids = [spawn(fun() -> Parent ! {self(), msc:match_spec_run([{N, 200}], C)} end)
            || N <- lists:seq(1, 20)],
    ?assertEqual([[N] || N <- lists:seq(1, 20)],
                 [receive {P, R} -> R end || P <- Pids]).

%% A Rust panic in a NIF is an Erlang exception, and the VM goes on.
panics_are_exceptions_test() ->
    ?assertError(nif_panicked, msc_tracer:nif_panic()),
    ?assertEqual({ok, a, [], []}, msc:test([a], [{['$1'], [], [{message, '$1'}]}], trace)).
