#!/usr/bin/env escript
%% -*- erlang -*-
%%
%% Writes the atoms ERTS creates at boot, in its atom table's order, one a
%% line as Erlang writes them (quoted where needed) after a `%` line naming
%% the release, for tools/gen_erts_atoms.py. They are read from a real node: this script
%% starts one more node of the same OTP, has it halt with a crash dump, and
%% reads the dump's atom table.
%%
%% Usage, with the OTP whose table you want:
%%
%%     escript tools/erts_boot_atoms.escript OUT
%%
%% The dump lists every atom, newest first. ERTS's own boot atoms (its
%% atom.names) come first in the table; the names of the BIFs follow,
%% starting with `abs`, then the atoms of the modules the node loaded. The
%% boot atoms are therefore the atoms before `abs`.
-mode(compile).

main([Out]) ->
    Dump = filename:join(tmp_dir(), "erts_boot_atoms." ++ os:getpid() ++ ".dump"),
    Erl = filename:join([code:root_dir(), "bin", "erl"]),
    _ = os:cmd("ERL_CRASH_DUMP=" ++ Dump ++ " " ++ Erl
               ++ " -noshell -eval 'erlang:halt(\"boot atoms\")'"),
    {ok, Text} = file:read_file(Dump),
    ok = file:delete(Dump),
    [_, AfterHeader] = binary:split(Text, <<"\n=atoms\n">>),
    [Section | _] = binary:split(AfterHeader, <<"\n=">>),
    Newest = binary:split(Section, <<"\n">>, [global, trim_all]),
    Atoms = [parse_atom(A) || A <- lists:reverse(Newest)],
    {Boot, [abs | _]} = lists:splitwith(fun(A) -> A =/= abs end, Atoms),
    [false, true | _] = Boot,
    Release = io_lib:format("OTP ~s (erts-~s)", [otp_version(), erlang:system_info(version)]),
    Header = io_lib:format("% The ~b boot atoms of ~s, in atom table order;"
                           " written by tools/erts_boot_atoms.escript.~n",
                           [length(Boot), Release]),
    Lines = [Header | [[io_lib:write_atom(A), "\n"] || A <- Boot]],
    ok = file:write_file(Out, unicode:characters_to_binary(Lines)),
    io:format("wrote ~s: the ~b boot atoms of ~s~n", [Out, length(Boot), Release]);
main(_) ->
    io:format(standard_error, "usage: escript erts_boot_atoms.escript OUT~n", []),
    halt(2).

otp_version() ->
    File = filename:join([code:root_dir(), "releases", erlang:system_info(otp_release),
                          "OTP_VERSION"]),
    {ok, Bin} = file:read_file(File),
    string:trim(binary_to_list(Bin)).

tmp_dir() ->
    case os:getenv("TMPDIR") of
        false -> "/tmp";
        Dir -> Dir
    end.

%% An atom as the dump writes it: plain (reserved words too), or quoted
%% with escapes.
parse_atom(Bin) ->
    case erl_scan:string(unicode:characters_to_list(Bin) ++ " ") of
        {ok, [{atom, _, A}], _} -> A;
        {ok, [{Reserved, _}], _} when is_atom(Reserved) -> Reserved
    end.
