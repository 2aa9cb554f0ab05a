#!/usr/bin/env escript
%% Writes otpNN.cases (NN: the running release) in the current directory:
%% each line a number text, a tab, and what erl_scan:string/1 of this
%% release makes of it. Run in each release (see README.md here).
%%
%% Results: `ok` and the tokens, `|`-separated (`integer 255`,
%% `float 16#3FF8000000000000` (the IEEE bits), `atom e5`, `var X`, or the
%% category of a token without a value: `dot`, `.`, `..`, `and`);
%% `error` and the error descriptor; `crash` and the exception's class and
%% reason when erl_scan itself fails.
main(_) ->
    Rel = erlang:system_info(otp_release),
    Out = "otp" ++ Rel ++ ".cases",
    Lines = [[Text, $\t, result(Text), $\n] || Text <- cases()],
    ok = file:write_file(Out, unicode:characters_to_binary(Lines)),
    io:format("~s: ~b cases~n", [Out, length(Lines)]).

result(Text) ->
    try erl_scan:string(Text) of
        {ok, Toks, _} -> ["ok ", lists:join(" | ", [token(T) || T <- Toks])];
        {error, {_, erl_scan, Desc}, _} -> io_lib:format("error ~0p", [Desc])
    catch
        Class:Reason -> io_lib:format("crash ~p:~0p", [Class, Reason])
    end.

token({float, _, F}) ->
    <<Bits:64>> = <<F:64/float>>,
    io_lib:format("float 16#~16.16.0B", [Bits]);
token({integer, _, N}) -> io_lib:format("integer ~b", [N]);
token({atom, _, A}) -> ["atom ", atom_to_list(A)];
token({var, _, V}) -> ["var ", atom_to_list(V)];
token({char, _, C}) -> io_lib:format("char ~b", [C]);
token({Cat, _}) -> atom_to_list(Cat).

cases() ->
    Named =
        ["16#1.8", "2#1.1#e2", "16#1.8#e-1", "2#.1", "10#.5", "16#1.8e",
         "1_000", "1e5", "1_", "1a", "12abc", "0x10", "16#ffz", "1.5a",
         "1.0e5x", "1.e5", "1.a", "16#1.g", "16#1.8#e", "16#1.8#ex",
         "16#1.8#e-", "2#1.0#e1024", "4div 2", "1andalso true",
         "1.0e308", "1.0e309", "1.0e-400", "2#1.0#e1023", "2#1.1#e1023",
         "2#1.0#e-1074", "2#1.0#e-1075", "2#1.1#e-1075", "2#1.0#e-1080",
         "16#1.0#e99999999999999999999", "16#1.0#e-99999999999999999999",
         "36#z.z#e200", "36#zzzzzzzzzzzzzzzzzz.zzzzzzzzzzzz", "3#1.1",
         "3#0.1", "7#0.1", "7#6.666666666666666666666666", "36#0.1",
         "36#1.0#e-200", "5#1.3#e-7", "10#1.5#e2", "10#1.5#e", "10#1_0.5",
         "10#1.5#e1x", "16#1.8#e1x", "16#1.8#e1_0", "16#1.8#e1__0",
         "16#1.8#e_1", "16#1.8#E+2", "16#0.0", "16#00.00", "16#00.10#e1",
         "2#0.000000000000000000000000000000000000000000000000000000001",
         "2#1" ++ lists:duplicate(70, $1) ++ ".1",
         "16#" ++ lists:duplicate(300, $f) ++ ".f",
         "16#" ++ lists:duplicate(260, $f) ++ ".f",
         "10#" ++ lists:duplicate(400, $9) ++ ".9",
         "2#1.0#e-" ++ lists:duplicate(400, $9),
         "2#1.0#e" ++ lists:duplicate(400, $9),
         "37#1", "1#0", "0#1", "99999999999999999999#1", "16#", "16# ",
         "16#.", "16#. ", "16#.8", "16#.g", "16#.#e1", "2#102", "2#1and 1",
         "2#1.1and 1", "1.0e", "1.0e-", "1.0e+", "1.0ex", "1.0e-x",
         "1..2", "1. ", "1.", "1.5.", "1.5. ", "1.5.a", "1.5.6", "1__0",
         "1_a", "16#_1", "16#1__1", "16#1_", "1.5e5_0", "1.5_e5",
         "0.1e-1_0", "1.5e5_", "1.5_", "1._5", "1.@", "1@", "1ß", "1é",
         "1À", "1.5ß", "16#fß", "1 a", "1,a", "1-1", "1+1", "1/2", "1)",
         "1#{}", "1e", "1E5", "1e+5", "2#", "2#2", "0", "007", "0.0",
         "00.00e-00", "123456789012345678901234567890",
         "1.7976931348623157e308", "4.9e-324", "2.4e-324", "1.0e-324",
         "16#1.fffffffffffff#e1023", "16#1.fffffffffffff8#e1023",
         "16#1.ffffffffffffff#e1023", "16#1#e2", "2#1#e1", "10#1#e1"],
    Bases = [{"", ["1", "1_0", "09"], ["5", "0", "1_1"]},
             {"2#", ["1", "1_0"], ["1", "0", "0_1", "2"]},
             {"8#", ["17"], ["7", "8"]},
             {"10#", ["1", "1_9"], ["5", "0_0"]},
             {"16#", ["fF", "a_b"], ["8", "e", "Ab", "g"]},
             {"36#", ["zZ"], ["z", "0_y"]}],
    Exps = ["", "e5", "E-3", "e+2", "e1_0", "#e2", "#E-2", "#e+1", "#e", "e"],
    Tails = ["", " ", "x", "_", "@", ".", ". ", ".x", "#", "_1"],
    Systematic =
        [B ++ I ++ F ++ E ++ T
         || {B, Ints, Fracs} <- Bases,
            I <- Ints,
            F <- [""] ++ ["." ++ D || D <- Fracs],
            E <- Exps,
            T <- Tails],
    Named ++ Systematic.
