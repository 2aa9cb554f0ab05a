%% Every case of the shared OTP 27 corpus through msc:test/3 gives the
%% corpus's answer, in any VM (msc_otp27_tests compares with the VM's own
%% answers, in an OTP 27 VM).
%%
%% The corpus is testdata/conformance/otp27-random-seed1.terms; the Rust
%% test that starts this VM writes it as ETF (pids and all) to
%% $MSC_TEST_DATA/conformance.etf, each case {Kind, Spec, Input, Expected}
%% behind a 4-byte length.
-module(msc_conformance_tests).

-include_lib("eunit/include/eunit.hrl").

-export([cases/0, answer/3, agree/2, live/3]).

cases() ->
    %% The corpus's generator (msgen.erl) made the atoms k1..k35 in this
    %% order. From OTP 26 a small map's layout follows its atoms' ages, and
    %% error messages print maps in their layout: make them in the same
    %% order here before the corpus makes them in its own.
    _ = [list_to_atom("k" ++ integer_to_list(K)) || K <- lists:seq(1, 35)],
    {ok, Bin} = file:read_file(filename:join(os:getenv("MSC_TEST_DATA"), "conformance.etf")),
    split(Bin).

-define(OTP, list_to_integer(erlang:system_info(otp_release))).

split(<<Len:32, Case:Len/binary, Rest/binary>>) -> [binary_to_term(Case) | split(Rest)];
split(<<>>) -> [].

corpus_test_() ->
    {timeout, 600, fun() ->
        Cases = cases(),
        ?assertEqual(20000, length(Cases)),
        Failed = [{N, Case, Got} || {N, {Kind, Spec, Input, Expected} = Case} <- number(Cases),
                                    Got <- [answer(Input, Spec, Kind)],
                                    not agree(Expected, Got)],
        [io:format(user, "case ~w: ~0p~n  got ~0p~n", [N, C, G]) || {N, C, G} <- lists:sublist(Failed, 10)],
        %% A large map with atom keys is laid out by its atoms' indices in
        %% the atom table, which differ between VMs: ERTS's messages print
        %% it in this VM's layout, not the corpus's VM's. Such cases must
        %% agree with this VM's own erlang:match_spec_test/3 (OTP 27 and
        %% later; older ones lay small maps out in key order too).
        Layout = [N || {N, {Kind, Spec, Input, _}, Got} <- Failed, prints_a_map(Got),
                       ?OTP < 27 orelse Got =:= live(Input, Spec, Kind)],
        io:format(user, "OTP ~w: ~w of ~w cases print a map in this VM's layout~n",
                  [?OTP, length(Layout), length(Failed)]),
        ?assertEqual(length(Failed), length(Layout))
    end}.

%% This VM's own answer.
live(Input, Spec, Kind) ->
    try erlang:match_spec_test(Input, Spec, Kind)
    catch Class:Reason -> {raised, Class, Reason}
    end.

prints_a_map({error, [{error, "Match expression part " ++ Rest}]}) -> string:find(Rest, "#{") =/= nomatch;
prints_a_map(_) -> false.

answer(Input, Spec, Kind) ->
    try msc:test(Input, Spec, Kind)
    catch Class:Reason -> {raised, Class, Reason}
    end.

number(L) -> lists:zip(lists:seq(1, length(L)), L).

%% compare.escript's rules: pids are equal to each other; for send and
%% receive, {accept, R} agrees with {ok, R, _, _} and reject with any
%% error; two "Excessive nesting" errors agree.
agree(Expected, Got) -> same(no_pids(Expected), no_pids(Got)).

same({accept, R}, {ok, R, _, _}) -> true;
same({accept, _}, _) -> false;
same(reject, {error, _}) -> true;
same(reject, _) -> false;
same({error, [{error, "Excessive nesting" ++ _} | _]}, {error, [{error, "Excessive nesting" ++ _} | _]}) -> true;
same(Expected, Got) -> Expected =:= Got.

no_pids(P) when is_pid(P) -> 'PID';
no_pids([H | T]) -> [no_pids(H) | no_pids(T)];
no_pids(T) when is_tuple(T) -> list_to_tuple(no_pids(tuple_to_list(T)));
no_pids(M) when is_map(M) -> maps:from_list(no_pids(maps:to_list(M)));
no_pids(X) -> X.
