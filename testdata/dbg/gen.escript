#!/usr/bin/env escript
%% -*- erlang -*-
%%! +S 1 +SDcpu 1 +SDio 1
%%
%% Generates the dbg trace file material in this directory with a real
%% Erlang/OTP 27 node (see README.md and FORMAT.md). Run it in a copy of this
%% directory, inside the OTP 27 chroot:
%%
%%     escript gen.escript
%%
%% It writes, into the current directory:
%%   single.trace            dbg:trace_port(file, "single.trace") of a workload
%%   wrap.N.trace, wrap.order  dbg:trace_port(file, {"wrap.", wrap, ".trace", 2000, 4})
%%   single.messages, wrap.messages   what dbg:trace_client delivers
%%   specs.terms, single.N.results, wrap.N.results   ets:match_spec_run results
%%   truncated.trace, truncated.messages, truncated.exit
%%   drop.trace, drop.messages   single.trace's first entries + a crafted drop entry
%%   read.cases              how dbg:trace_client ends on damaged / odd input
%%   wrap_sort.cases         dbg's wrap-set ordering for every set of indexes
%%
%% Pids differ from run to run; the checked-in files are what one run wrote.
%% Terms are written with ~0p, one per line, dot-terminated. That is
%% file:consult syntax except for local pids, which print as <0.N.0>
%% (the syntax of the other testdata files); the script reads every file
%% back (pids mapped to tuples) and checks it gives the same terms.
-mode(compile).

-define(WRAP_SIZE, 2000).
-define(WRAP_COUNT, 4).
-define(WRAP_WRAPS, 6).   %% rotations before stopping: files 3,4,0,1 remain

main(_) ->
    "27" = erlang:system_info(otp_release),
    ok = load_demo(),
    {ok, _} = dbg:start(),
    Single = gen_single(),
    Wrap = gen_wrap(),
    Specs = specs(),
    write_terms("specs.terms", Specs),
    results("single", Single, Specs),
    results("wrap", Wrap, Specs),
    %% reader crashes inside binary_to_term/1 log an error report: hide it
    logger:set_primary_config(level, critical),
    Cases = gen_damaged() ++ wrap_read_cases(Wrap),
    logger:set_primary_config(level, notice),
    write_terms("read.cases", Cases),
    write_terms("wrap_sort.cases", wrap_sort_cases()),
    dbg:stop(),
    os:cmd("rm -rf tmp"),
    io:format("single: ~b messages, wrap: ~b messages~n",
              [length(Single), length(Wrap)]).

%% ------------------------------------------------------------------
%% The traced module, compiled on the fly.

demo_source() ->
    "-module(dbgdemo).
     -export([server/1, client/2, worker/1, looper/1,
              fact/1, add/2, greet/1, divide/2]).
     server(Total) ->
         receive
             {add, From, X} ->
                 T = add(Total, X),
                 From ! {sum, self(), T},
                 server(T);
             {stop, From} ->
                 From ! {stopped, self(), Total}
         end.
     client(Server, Parent) ->
         receive
             {go, Name, N} ->
                 true = register(Name, self()),
                 F = fact(N),
                 G = greet(atom_to_list(Name)),
                 R = lists:reverse(G),
                 Server ! {add, self(), F},
                 S = receive {sum, Server, S0} -> S0 end,
                 D1 = safe_divide(S, N),
                 D2 = safe_divide(S, 0),
                 W = spawn_link(dbgdemo, worker, [self()]),
                 W ! {work, N},
                 WR = receive {done, W, WR0} -> WR0 end,
                 true = unregister(Name),
                 Parent ! {finished, self(), {F, length(R), S, D1, D2, WR}},
                 client(Server, Parent);
             stop ->
                 ok
         end.
     safe_divide(A, B) ->
         try divide(A, B) catch error:badarith -> infinity end.
     divide(A, B) -> A div B.
     worker(Parent) ->
         receive {work, N} -> Parent ! {done, self(), add(N, N)} end.
     looper(Server) ->
         receive
             {round, From, N} ->
                 F = fact(N rem 4),
                 Server ! {add, self(), F},
                 S = receive {sum, Server, S0} -> S0 end,
                 From ! {round_done, self(), S},
                 looper(Server);
             stop ->
                 ok
         end.
     fact(0) -> 1;
     fact(N) -> N * fact(N - 1).
     add(A, B) -> A + B.
     greet(Name) -> \"hello \" ++ Name.
    ".

load_demo() ->
    {ok, Toks, _} = erl_scan:string(demo_source()),
    Forms = split_forms(Toks, [], []),
    {ok, dbgdemo, Bin} = compile:forms(Forms, [binary, return_errors]),
    {module, dbgdemo} = code:load_binary(dbgdemo, "dbgdemo.erl", Bin),
    ok.

split_forms([], [], Acc) ->
    lists:reverse(Acc);
split_forms([{dot, _} = Dot | Rest], Cur, Acc) ->
    {ok, Form} = erl_parse:parse_form(lists:reverse([Dot | Cur])),
    split_forms(Rest, [], [Form | Acc]);
split_forms([T | Rest], Cur, Acc) ->
    split_forms(Rest, [T | Cur], Acc).

%% Trace patterns, the same for both traces.
%%   fact/1     plain call trace (local, recursive)
%%   add/2      dbg:fun2ms(fun(_) -> return_trace() end)
%%   greet/1    return_trace plus message(length(Name)): 5-tuple call messages
%%   divide/2   exception_trace (divide(_, 0) raises badarith)
%%   lists:reverse/1  global call trace, no match spec
set_patterns() ->
    {ok, _} = dbg:tpl(dbgdemo, fact, 1, []),
    {ok, _} = dbg:tpl(dbgdemo, add, 2, [{'_', [], [{return_trace}]}]),
    {ok, _} = dbg:tpl(dbgdemo, greet, 1,
                      [{['$1'], [], [{return_trace}, {message, {length, '$1'}}]}]),
    {ok, _} = dbg:tpl(dbgdemo, divide, 2, [{'_', [], [{exception_trace}]}]),
    {ok, _} = dbg:tp(lists, reverse, 1, []),
    ok.

%% Stop dbg and wait until the trace port (and so the file) is closed.
stop_tracer() ->
    {ok, Port} = dbg:get_tracer(),
    ok = dbg:flush_trace_port(),
    Ref = erlang:monitor(port, Port),
    ok = dbg:stop(),
    receive {'DOWN', Ref, port, Port, _} -> ok end,
    {ok, _} = dbg:start(),
    ok.

%% ------------------------------------------------------------------
%% single.trace

gen_single() ->
    _ = file:delete("single.trace"),
    {ok, _} = dbg:tracer(port, dbg:trace_port(file, "single.trace")),
    ok = set_patterns(),
    Self = self(),
    Server = spawn(dbgdemo, server, [0]),
    C1 = spawn(dbgdemo, client, [Server, Self]),
    C2 = spawn(dbgdemo, client, [Server, Self]),
    C3 = spawn(dbgdemo, client, [Server, Self]),
    {ok, _} = dbg:p(Server, [c, s, r]),
    {ok, _} = dbg:p(C1, [call, send, 'receive', procs, timestamp]),
    {ok, _} = dbg:p(C2, [c, s, r]),
    {ok, _} = dbg:p(C3, [call, arity, procs, timestamp]),
    Rounds = [{C1, c1, 4}, {C2, c2, 3}, {C3, c3, 5},
              {C1, c1_again, 2}, {C2, c2_again, 6}, {C3, c3_again, 1},
              {C1, c1_third, 3}, {C2, c2_third, 2}, {C3, c3_third, 7}],
    [begin
         C ! {go, Name, N},
         receive {finished, C, _} -> ok end
     end || {C, Name, N} <- Rounds],
    [begin
         Ref = monitor(process, C),
         C ! stop,
         receive {'DOWN', Ref, process, C, _} -> ok end
     end || C <- [C1, C2, C3]],
    Server ! {stop, Self},
    receive {stopped, Server, _} -> ok end,
    ok = stop_tracer(),
    {ok, Bin} = file:read_file("single.trace"),
    Msgs = check_file_format(Bin),
    {Read, end_of_trace} = read_trace("single.trace"),
    Read = Msgs,
    write_terms("single.messages", Read),
    Read.

%% Walk the entries of a trace file by hand: <<0, Size:32, Term:Size/binary>>.
check_file_format(Bin) ->
    walk(Bin, []).

walk(<<>>, Acc) ->
    lists:reverse(Acc);
walk(<<0, Size:32, Body:Size/binary, Rest/binary>>, Acc) ->
    <<131, _/binary>> = Body,
    walk(Rest, [binary_to_term(Body) | Acc]).

entry_offsets(Bin) -> entry_offsets(Bin, 0, []).
entry_offsets(<<>>, _, Acc) -> lists:reverse(Acc);
entry_offsets(<<_, Size:32, _:Size/binary, Rest/binary>>, Off, Acc) ->
    entry_offsets(Rest, Off + 5 + Size, [{Off, Size} | Acc]).

%% ------------------------------------------------------------------
%% The wrap set

wrap_names() ->
    [F || F <- filelib:wildcard("wrap.*.trace")].

wrap_index(F) ->
    list_to_integer(lists:sublist(F, 6, length(F) - 11)).

gen_wrap() ->
    [ok = file:delete(F) || F <- wrap_names()],
    {ok, _} = dbg:tracer(port, dbg:trace_port(file, {"wrap.", wrap, ".trace",
                                                     ?WRAP_SIZE, ?WRAP_COUNT})),
    ok = set_patterns(),
    Self = self(),
    Server = spawn(dbgdemo, server, [0]),
    L1 = spawn(dbgdemo, looper, [Server]),
    L2 = spawn(dbgdemo, looper, [Server]),
    {ok, _} = dbg:p(Server, [c, s, r]),
    {ok, _} = dbg:p(L1, [call, send, 'receive', timestamp]),
    {ok, _} = dbg:p(L2, [c, s, r]),
    wrap_rounds(Self, [L1, L2], 1, {["wrap.0.trace"], "wrap.0.trace"}, 0),
    ok = stop_tracer(),
    [begin C ! stop end || C <- [L1, L2]],
    Server ! {stop, Self},
    receive {stopped, Server, _} -> ok end,
    Files = wrap_names(),
    ?WRAP_COUNT = length(Files),
    %% Read every file alone, then the set, and find the order in which the
    %% set reading visits the files.
    PerFile = [begin
                   {M, end_of_trace} = read_trace(F),
                   [_ | _] = M,
                   {F, M}
               end || F <- Files],
    {Set, end_of_trace} =
        read_trace({"wrap.", wrap, ".trace", ?WRAP_SIZE, ?WRAP_COUNT}),
    Order = derive_order(Set, PerFile),
    %% dbg's own functions (used by gen_reader/2) give the same order
    Order = [filename:basename(N) ||
                N <- dbg:wrap_postsort(
                       dbg:wrap_sort(dbg:wrap_presort(filename:absname("wrap."),
                                                      ".trace"), ?WRAP_COUNT))],
    true = Order =/= lists:sort(Order),
    %% every file but the newest ends with the entry that reached ?WRAP_SIZE
    [begin
         {ok, B} = file:read_file(F),
         {LastOff, _} = lists:last(entry_offsets(B)),
         true = LastOff < ?WRAP_SIZE andalso byte_size(B) >= ?WRAP_SIZE
     end || F <- lists:droplast(Order)],
    ok = file:write_file("wrap.order", [[O, $\n] || O <- Order]),
    write_terms("wrap.messages", Set),
    Set.

%% One looper round at a time (less than a file's worth); after each, flush and look at the files.
%% Every rotation creates the file that was missing (the gap), so a new name
%% appearing is a rotation.
wrap_rounds(Self, Loopers, I, {Before, Current0}, Wraps) ->
    L = lists:nth(1 + I rem length(Loopers), Loopers),
    L ! {round, Self, I},
    receive {round_done, L, _} -> ok end,
    ok = dbg:flush_trace_port(),
    Now = wrap_names(),
    {Wraps1, Current} = case Now -- Before of
                            [N] -> {Wraps + 1, N};
                            [] -> {Wraps, Current0}
                        end,
    Size = filelib:file_size(Current),
    if Wraps1 > ?WRAP_WRAPS -> error({too_many_wraps, Wraps1});
       Wraps1 =:= ?WRAP_WRAPS, Size > 0 -> ok;
       true -> wrap_rounds(Self, Loopers, I + 1, {Now, Current}, Wraps1)
    end.

derive_order([], []) -> [];
derive_order(Msgs, PerFile) ->
    [{F, M}] = [{F, M} || {F, M} <- PerFile, lists:prefix(M, Msgs)],
    [F | derive_order(lists:nthtail(length(M), Msgs), PerFile -- [{F, M}])].

%% How reading a wrap set ends when the Count given to trace_client is not
%% the one the set was written with, or files are missing.
wrap_read_cases(Set) ->
    Files = wrap_names(),
    Idx = lists:sort([wrap_index(F) || F <- Files]),
    Read = fun(Spec) ->
                   {M, End} = read_trace(Spec),
                   {length(M), End}
           end,
    Default = Read({"wrap.", wrap, ".trace"}),
    Counts = [{wrap_read, {count, C}, Idx, Read({"wrap.", wrap, ".trace", 0, C})}
              || C <- [3, 4, 5, 8]],
    %% copies with one file removed
    Missing =
        [begin
             Dir = "tmp/missing" ++ integer_to_list(Gone),
             ok = filelib:ensure_path(Dir),
             [{ok, _} = file:copy(F, filename:join(Dir, F))
              || F <- Files, wrap_index(F) =/= Gone],
             {wrap_read, {missing, Gone}, Idx -- [Gone],
              Read({Dir ++ "/wrap.", wrap, ".trace", 0, ?WRAP_COUNT})}
         end || Gone <- Idx],
    %% modification times set opposite to the reading order: same result
    MDir = "tmp/mtime",
    ok = filelib:ensure_path(MDir),
    Order = [string:trim(L) || L <- string:lexemes(element(2, file:read_file("wrap.order")), "\n")],
    [begin
         Copy = filename:join(MDir, binary_to_list(F)),
         {ok, _} = file:copy(binary_to_list(F), Copy),
         ok = file:change_time(Copy, {{2020, 1, 1}, {0, 0, 0}},
                               {{2020, 1, 1 + length(Order) - K}, {0, 0, 0}})
     end || {K, F} <- lists:zip(lists:seq(1, length(Order)), Order)],
    {Set, end_of_trace} = read_trace({MDir ++ "/wrap.", wrap, ".trace", 0, ?WRAP_COUNT}),
    [{wrap_read, default_count_8, Idx, Default} | Counts] ++ Missing ++
        [{wrap_read, mtimes_reversed, Idx, {length(Set), end_of_trace}},
         {wrap_read, no_files, [],
          Read({"tmp/nonexistent/wrap.", wrap, ".trace", 0, ?WRAP_COUNT})}].

%% ------------------------------------------------------------------
%% Reading with dbg:trace_client and a handler fun.
%%
%% The handler forwards every message. The reader process is spawned by
%% dbg:trace_client in this process; a trace session of our own with
%% set_on_first_spawn + procs reports its exit reason (a monitor taken after
%% trace_client returns could miss it).

read_trace(Spec) ->
    Self = self(),
    Session = trace:session_create(msc_watch, Self, []),
    1 = trace:process(Session, Self, true, [procs, set_on_first_spawn]),
    Handler = fun(Msg, N) -> Self ! {tc_msg, self(), Msg}, N + 1 end,
    Reader = dbg:trace_client(file, Spec, {Handler, 0}),
    true = is_pid(Reader),
    Reason = case receive {trace, Reader, exit, R} -> R end of
                 %% keep no dbg.erl line numbers: {badarg, {M, F, Args}}
                 {badarg, [{M, F, A, _} | _]} -> {badarg, {M, F, A}};
                 R1 -> R1
             end,
    true = trace:session_destroy(Session),
    flush_watch(),
    Msgs = collect(Reader, []),
    case {Reason, lists:reverse(Msgs)} of
        {normal, [end_of_trace | Rest]} -> {lists:reverse(Rest), end_of_trace};
        {_, _} -> {Msgs, {exit, Reason}}
    end.

collect(Reader, Acc) ->
    receive {tc_msg, Reader, M} -> collect(Reader, [M | Acc])
    after 200 -> lists:reverse(Acc)
    end.

flush_watch() ->
    receive {trace, _, _, _} -> flush_watch();
            {trace, _, _, _, _} -> flush_watch()
    after 0 -> ok
    end.

%% ------------------------------------------------------------------
%% Damaged files

gen_damaged() ->
    {ok, Bin} = file:read_file("single.trace"),
    Offs = entry_offsets(Bin),
    {LastOff, LastSize} = lists:last(Offs),
    %% truncated.trace: the last entry cut in the middle of its term
    Cut = LastOff + 5 + LastSize div 2,
    ok = file:write_file("truncated.trace", binary:part(Bin, 0, Cut)),
    {TMsgs, TEnd} = read_trace("truncated.trace"),
    write_terms("truncated.messages", TMsgs),
    write_terms("truncated.exit", [TEnd]),
    %% drop.trace: three real entries, a drop entry for 42 messages, two more
    {Off3, _} = lists:nth(4, Offs),
    {Off5, _} = lists:nth(6, Offs),
    Drop = <<(binary:part(Bin, 0, Off3))/binary, 1, 42:32,
             (binary:part(Bin, Off3, Off5 - Off3))/binary>>,
    ok = file:write_file("drop.trace", Drop),
    {DMsgs, end_of_trace} = read_trace("drop.trace"),
    write_terms("drop.messages", DMsgs),
    %% more cuts and damage, recorded in read.cases only
    ok = filelib:ensure_path("tmp"),
    Try = fun(Label, Data) ->
                  F = "tmp/" ++ atom_to_list(Label) ++ ".trace",
                  ok = file:write_file(F, Data),
                  {M, End} = read_trace(F),
                  {damaged, Label, byte_size(Data), length(M), End}
          end,
    [{damaged, cut_mid_term, Cut, length(TMsgs), TEnd},
     Try(cut_after_header, binary:part(Bin, 0, LastOff + 5)),
     Try(cut_mid_header, binary:part(Bin, 0, LastOff + 3)),
     Try(cut_after_op, binary:part(Bin, 0, LastOff + 1)),
     Try(cut_at_entry_boundary, binary:part(Bin, 0, LastOff)),
     Try(empty_file, <<>>),
     Try(drop_entry_last, <<(binary:part(Bin, 0, LastOff))/binary, 1, 7:32>>),
     Try(op_byte_2, <<(binary:part(Bin, 0, LastOff))/binary, 2,
                      (binary:part(Bin, LastOff + 1, byte_size(Bin) - LastOff - 1))/binary>>),
     Try(term_not_external_format,
         <<(binary:part(Bin, 0, LastOff))/binary, 0, 3:32, 1, 2, 3>>),
     Try(trailing_garbage_byte, <<Bin/binary, 0>>),
     begin
         {M, End} = read_trace("tmp/no_such_file.trace"),
         {damaged, no_such_file, 0, length(M), End}
     end].

%% ------------------------------------------------------------------
%% dbg:wrap_sort(dbg:wrap_presort(Name, Suffix), Count) is what
%% trace_client(file, {Name, wrap, Suffix, _, Count}, _) reads, in order.
%% Every set of present indexes 0..Count for Count 1..4, on real (empty) files.

wrap_sort_cases() ->
    Sets = [{C, S} || C <- lists:seq(1, 4), S <- subsets(lists:seq(0, C))],
    Idx = [{C, S, wrap_sort_outcome(C, [lists:concat(["wrap.", I, ".trace"]) || I <- S])}
           || {C, S} <- Sets],
    Named = [{names, C, Ns, wrap_sort_outcome(C, Ns)} ||
                {C, Ns} <- [{4, ["wrap.0.trace", "wrap.01.trace", "wrap.2.trace"]},
                            {4, ["wrap.0.trace", "wrap.1.trace", "wrap.01.trace"]},
                            {4, ["wrap.0.trace", "wrap..trace", "wrap.x.trace",
                                 "wrap.1.trace.bak", "wrap.1.trace", "wrap.-2.trace",
                                 "other.2.trace"]},
                            {12, ["wrap.9.trace", "wrap.10.trace", "wrap.11.trace",
                                  "wrap.12.trace", "wrap.0.trace", "wrap.1.trace",
                                  "wrap.2.trace", "wrap.3.trace", "wrap.4.trace",
                                  "wrap.5.trace", "wrap.6.trace", "wrap.7.trace"]}]],
    Idx ++ Named.

wrap_sort_outcome(Count, Names) ->
    Dir = "tmp/ws",
    os:cmd("rm -rf " ++ Dir),
    ok = filelib:ensure_path(Dir),
    [ok = file:write_file(filename:join(Dir, N), <<>>) || N <- Names],
    case catch dbg:wrap_sort(dbg:wrap_presort(Dir ++ "/wrap.", ".trace"), Count) of
        {'EXIT', R} -> {exit, R};
        L when is_list(L) -> {ok, [filename:basename(N) || {_, N} <- L]}
    end.

subsets([]) -> [[]];
subsets([H | T]) -> S = subsets(T), S ++ [[H | X] || X <- S].

%% ------------------------------------------------------------------
%% Match specs

specs() ->
    [%% 1: plain call messages, the MFA (or {M,F,Arity} with the arity flag)
     [{{trace, '_', call, '$1'}, [], ['$1']}],
     %% 2: projection of 4-tuples
     [{{trace, '$1', '$2', '_'}, [], [{{'$1', '$2'}}]}],
     %% 3: timestamped messages of 5 and 6 elements, with their timestamps
     [{{trace_ts, '$1', '$2', '_', '$3'}, [], [{{'$1', '$2', '$3'}}]},
      {{trace_ts, '$1', '$2', '_', '_', '$3'}, [], [{{'$1', '$2', '$3'}}]}],
     %% 4: everything
     [{'_', [], ['$_']}],
     %% 5: integer results above 10 of return_from, with the function name
     [{{trace, '_', return_from, {'_', '$1', '_'}, '$2'},
       [{is_integer, '$2'}, {'>', '$2', 10}], [{{'$1', '$2'}}]},
      {{trace_ts, '_', return_from, {'_', '$1', '_'}, '$2', '_'},
       [{is_integer, '$2'}, {'>', '$2', 10}], [{{'$1', '$2'}}]}],
     %% 6: the last element of any trace_ts message (its timestamp)
     [{'$1', [{'=:=', {element, 1, '$1'}, trace_ts}],
       [{element, {tuple_size, '$1'}, '$1'}]}],
     %% 7: send messages: {Sender, Msg tag, Receiver}; others become 'other'
     [{{trace, '$1', send, '$2', '$3'}, [{is_tuple, '$2'}],
       [{{'$1', {element, 1, '$2'}, '$3'}}]},
      {'_', [], [other]}]].

results(Prefix, Msgs, Specs) ->
    lists:foldl(
      fun(Spec, N) ->
              R = ets:match_spec_run(Msgs, ets:match_spec_compile(Spec)),
              write_terms(lists:concat([Prefix, ".", N, ".results"]), R),
              N + 1
      end, 1, Specs).

%% ------------------------------------------------------------------
%% Output, and the read-back check

write_terms(File, Terms) ->
    Text = [io_lib:format("~0p.~n", [T]) || T <- Terms],
    ok = file:write_file(File, Text),
    Back = read_back(File),
    Back = [unpid(T) || T <- Terms],
    ok.

read_back(File) ->
    {ok, Bin} = file:read_file(File),
    Text = re:replace(Bin, "<([0-9]+)\\.([0-9]+)\\.([0-9]+)>",
                      "{'$pid',\\1,\\2,\\3}", [global, {return, list}]),
    parse_all(Text, 1).

parse_all(Text, Line) ->
    case erl_scan:tokens([], Text, Line) of
        {done, {ok, Toks, Line1}, Rest} ->
            {ok, T} = erl_parse:parse_term(Toks),
            [T | parse_all(Rest, Line1)];
        {more, _} ->
            [] = string:trim(Text),
            []
    end.

unpid(P) when is_pid(P) ->
    [A, B, C] = string:lexemes(pid_to_list(P), "<.>"),
    {'$pid', list_to_integer(A), list_to_integer(B), list_to_integer(C)};
unpid(T) when is_tuple(T) -> list_to_tuple(unpid(tuple_to_list(T)));
unpid([H | T]) -> [unpid(H) | unpid(T)];
unpid(M) when is_map(M) -> maps:from_list(unpid(maps:to_list(M)));
unpid(X) -> X.
