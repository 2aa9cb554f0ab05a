#!/usr/bin/env escript
%% -*- erlang -*-
%% replay.escript IN OUT DIFFS
%% Re-evaluates every {Kind, MS, In, Expected} case of IN (table/trace kinds)
%% with erlang:match_spec_test/3 of the running OTP. Writes OUT: the same
%% lines, where a case whose answer differs has its Expected replaced
%% (pids normalised to 'PID'). % lines are copied. DIFFS gets one line per
%% differing case: {LineNo, Case, Got}.
-mode(compile).
main([In, Out, Diffs]) ->
    {ok, B} = file:read_file(In),
    Lines = binary:split(B, <<"\n">>, [global]),
    {ok, F} = file:open(Out, [write, raw, binary]),
    {ok, D} = file:open(Diffs, [write, {encoding, utf8}]),
    N = loop(Lines, 1, F, D, 0, 0),
    file:close(F), file:close(D),
    io:format("~s: ~w cases, ~w differ~n", [In, element(1, N), element(2, N)]).

loop([], _, _, _, C, X) -> {C, X};
loop([<<>>], _, _, _, C, X) -> {C, X};
loop([L | Ls], I, F, D, C, X) ->
    case L of
        <<"%", _/binary>> -> file:write(F, [L, "\n"]), loop(Ls, I + 1, F, D, C, X);
        <<>> -> file:write(F, "\n"), loop(Ls, I + 1, F, D, C, X);
        _ ->
            {Kind, MS, Inp, Exp} = Case = parse(L),
            Got = norm(run(Kind, MS, Inp)),
            case Got =:= Exp of
                true -> file:write(F, [L, "\n"]), loop(Ls, I + 1, F, D, C + 1, X);
                false ->
                    io:format(D, "~999999tp.~n", [{I, Case, Got}]),
                    S = unicode:characters_to_list(L),
                    ExpT = lists:flatten(io_lib:format("~999999tp}.", [Exp])),
                    GotT = lists:flatten(io_lib:format("~999999tp}.", [Got])),
                    New = case lists:suffix(ExpT, S) of
                              true -> lists:sublist(S, length(S) - length(ExpT)) ++ GotT;
                              false -> lists:flatten(io_lib:format("~999999tp.", [{Kind, MS, Inp, Got}]))
                          end,
                    file:write(F, [unicode:characters_to_binary(New), "\n"]),
                    loop(Ls, I + 1, F, D, C + 1, X + 1)
            end
    end.

run(Kind, MS, In) when Kind =:= table; Kind =:= trace ->
    try erlang:match_spec_test(In, MS, Kind) catch Cl:R -> {raised, Cl, R} end.

norm(P) when is_pid(P) -> 'PID';
norm(T) when is_tuple(T) -> list_to_tuple(norm(tuple_to_list(T)));
norm([H | T]) -> [norm(H) | norm(T)];
norm(M) when is_map(M) -> maps:from_list(norm(maps:to_list(M)));
norm(X) -> X.

parse(Line) ->
    S0 = unicode:characters_to_list(Line),
    S = re:replace(S0, "<[0-9]+\\.[0-9]+\\.[0-9]+>", "'PID'", [global, {return, list}, unicode]),
    {ok, Toks, _} = erl_scan:string(S),
    {ok, T} = erl_parse:parse_term(Toks),
    T.
