%% What only a VM of a release msc is exact against (OTP 27 or 29) can
%% check: msc:test/3, which gives this VM's release's answers, against this
%% VM's erlang:match_spec_test/3 on every case of the shared corpus,
%% msc:match_spec_run/2 against ets:match_spec_run/2 on every table case,
%% and msc_table against ets with the corpus's table specs. The Rust test
%% that starts the VM runs this suite only in OTP 27 and later, and reports
%% it as not run in an older one; here an older one is a failure.
-module(msc_otp27_tests).

-include_lib("eunit/include/eunit.hrl").

-define(OTP, list_to_integer(erlang:system_info(otp_release))).

this_is_otp27_test() ->
    ?assert(?OTP >= 27).

%% The same answers as this VM's own, pids and map layouts included.
against_match_spec_test_test_() ->
    {timeout, 600, fun() ->
        Cases = [C || {Kind, _, _, _} = C <- msc_conformance_tests:cases(),
                      Kind =:= table orelse Kind =:= trace],
        Bad = [{Kind, Spec, Input, Live, Got}
               || {Kind, Spec, Input, _} <- Cases,
                  Live <- [msc_conformance_tests:live(Input, Spec, Kind)],
                  Got <- [msc_conformance_tests:answer(Input, Spec, Kind)],
                  Live =/= Got andalso not msc_conformance_tests:agree(Live, Got)],
        [io:format(user, "differ: ~0p~n", [B]) || B <- lists:sublist(Bad, 10)],
        io:format(user, "against match_spec_test: ~w cases~n", [length(Cases)]),
        ?assertEqual([], Bad)
    end}.

%% ets:match_spec_run/2 against msc:match_spec_run/2 on each table case's
%% input. Specs ets rejects are counted, not run.
match_spec_run_test_() ->
    {timeout, 600, fun() ->
        Table = [{Spec, Input} || {table, Spec, Input, _} <- msc_conformance_tests:cases()],
        Outcomes = [run_both(Spec, Input) || {Spec, Input} <- Table],
        Ran = [O || O <- Outcomes, O =/= not_compiled],
        Bad = [O || {differ, _, _, _} = O <- Ran],
        [io:format(user, "differ: ~0p~n", [B]) || B <- lists:sublist(Bad, 10)],
        io:format(user, "match_spec_run: ~w table cases, ~w compared, ~w not compiled by ets~n",
                  [length(Table), length(Ran), length(Outcomes) - length(Ran)]),
        ?assert(length(Ran) > 6000),
        ?assertEqual([], Bad)
    end}.

run_both(Spec, Input) ->
    Rows = [Input, {Input}, [Input, Input]],
    Compiled = try ets:match_spec_compile(Spec) of
                   Compiled0 -> {ok, Compiled0}
               catch
                   error:_ -> not_compiled
               end,
    case Compiled of
        not_compiled ->
            not_compiled;
        {ok, Ets} ->
            {ok, Msc} = msc:compile(Spec, table),
            Want = ets:match_spec_run(Rows, Ets),
            case msc:match_spec_run(Rows, Msc) of
                Want -> same;
                Got -> {differ, Spec, Want, Got}
            end
    end.

%% msc_table against ets with random operations whose specs are the
%% corpus's valid table specs.
table_with_corpus_specs_test_() ->
    {timeout, 600, fun() ->
        rand:seed(exsss, {27, 3, 5}),
        Specs = lists:sublist([Spec || {table, Spec, _, {ok, _, _, _}}
                                           <- msc_conformance_tests:cases()], 400),
        [msc_table_tests:run(Type, Keypos, Specs)
         || {Type, Keypos} <- [{set, 1}, {bag, 1}, {set, 2}, {bag, 2}], _ <- lists:seq(1, 10)],
        ok
    end}.
