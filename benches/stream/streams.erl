%% Inputs for the stream benchmark (`msc run --spec FILE --input FILE`), and
%% real ERTS timed doing the same filtering job end to end.
%%
%% streams:write(Dir) writes 2,000,000 events, {event, I, user_K, Op, Size},
%% three ways: Dir/events.etf (term_to_binary/1 of each, back to back),
%% Dir/events.p4 (each after a 4-byte big-endian length, {packet, 4}) and
%% Dir/events.terms (one `~w.` term a line), and two specs, selective.ms
%% (keeps about 10%) and project.ms (keeps all, builds a 2-tuple), each one
%% term {table, MatchSpec}.
%%
%% streams:write_dbg(Dir) / write_dbg(Dir, N) traces a small workload with
%% dbg to a file trace port, Dir/workload.trace (about N trace messages,
%% default 1,000,000), and writes dbg_selective.ms (calls to one function,
%% about 10%) and dbg_project.ms (every call message, as {M, F}).
%%
%% streams:write_real(Dir) / write_real(Dir, N) writes N (default 2,000,000)
%% events of the shapes real event streams have, Dir/real.etf, real.p4 and
%% real.terms, and two specs, real_selective.ms (about 5%, one atom and a
%% map of the payload tested) and real_project.ms (three clauses, about a
%% quarter kept, tuples of map values, byte_size and length projected).
%% An event is one of:
%%   {event, Id, Kind, #{amount => Int | Float, currency => Atom,
%%                       account => Int}, #{node => Atom, seq => Int}}
%%   {error, Id, {Reason, Binary}}
%%   {trace_ts, Pid, call, {Module, Function, Args}, {Mega, Sec, Micro}}
%% with long atoms (payment_authorized, 'app@db-eu-west-1'), floats,
%% binaries of 10 to 40 bytes and argument lists of 1 to 3 terms.
%%
%% streams:erts(Dir) / erts(Dir, Rounds) times ERTS on each input and spec:
%% read the file (file:read_file/1, or dbg:trace_client/3), split it into
%% terms, run ets:match_spec_run/2 on batches of 10,000 and count the
%% results; the spec is compiled in the timed part. One untimed round, then
%% Rounds timed ones (default 5), each in a fresh process; one JSON line a
%% case with the median and the minimum.
-module(streams).
-export([write/1, write/2, write_dbg/1, write_dbg/2, write_real/1, write_real/2,
         erts/1, erts/2, specs/0, dbg_specs/0, real_specs/0, event/1, real_event/1]).

-define(N, 2000000).
-define(CHUNK, 10000).          % events written a chunk at a time
-define(BATCH, 10000).          % terms per ets:match_spec_run/2 call
-define(READ_CHUNK, 65536).     % bytes of text handed to erl_scan at a time
-define(WL, streams_wl).        % the traced workload's module

-compile({inline, [push/5]}).

specs() ->
    %% Op is delete for 1 in 5 events and Size is uniform in 0..9999, so
    %% delete with Size >= 5000 is 1 in 10.
    [{selective, table,
      [{{event, '$1', '$2', delete, '$3'}, [{'>=', '$3', 5000}], ['$1']}]},
     {project, table,
      [{{event, '$1', '$2', '_', '$3'}, [], [{{'$2', '$3'}}]}]}].

dbg_specs() ->
    [{dbg_selective, table,
      [{{trace, '$1', call, {?WL, validate, '$2'}}, [], ['$1']}]},
     {dbg_project, table,
      [{{trace, '_', call, {'$1', '$2', '_'}}, [], [{{'$1', '$2'}}]}]}].

real_specs() ->
    [{real_selective, table,
      [{{event, '$1', payment_captured, #{amount => '$2', currency => eur}, '_'},
        [{'>', '$2', 500}], ['$1']}]},
     {real_project, table,
      [{{event, '$1', '$2', #{amount => '$3', currency => '$4'}, '_'},
        [{is_float, '$3'}], [{{'$1', '$2', '$3', '$4'}}]},
       {{error, '$1', {'$2', '$3'}}, [{'>', {byte_size, '$3'}, 30}],
        [{{'$1', '$2', {byte_size, '$3'}}}]},
       {{trace_ts, '_', call, {'$1', '$2', '$3'}, '_'}, [{'==', '$1', ets}],
        [{{'$2', {length, '$3'}}}]}]}].

%% Real event I (1-based), from a hash of I.
real_event(I) ->
    H = erlang:phash2(I, 1 bsl 27),
    case H rem 10 of
        N when N < 6 ->
            Kind = element(1 + (H div 10) rem 5, {payment_authorized, payment_captured,
                                                   refund_requested, login, logout}),
            Amount = case (H div 50) rem 3 of
                         0 -> (H div 150) rem 1000 + ((H div 7) rem 100) / 100;
                         _ -> (H div 150) rem 1000
                     end,
            Currency = element(1 + (H div 13) rem 3, {eur, usd, gbp}),
            Node = element(1 + (H div 17) rem 3, {'app@db-eu-west-1', 'app@db-us-east-2',
                                                   'app@web-eu-west-1'}),
            {event, I, Kind, #{amount => Amount, currency => Currency, account => H rem 100000},
             #{node => Node, seq => I}};
        N when N < 8 ->
            Reason = element(1 + (H div 10) rem 4, {timeout, badarg, noproc, closed}),
            Text = binary:part(<<"upstream service did not answer within the deadline">>,
                               0, 10 + (H div 40) rem 31),
            {error, I, {Reason, Text}};
        _ ->
            {M, F} = element(1 + (H div 10) rem 4, {{ets, lookup}, {ets, insert},
                                                    {gen_server, call}, {lists, keyfind}}),
            Args = lists:sublist([user_table, {key, H rem 1000}, <<"v">>], 1 + (H div 40) rem 3),
            Pid = c:pid(0, 80 + H rem 400, 0),
            {trace_ts, Pid, call, {M, F, Args}, {1764, H rem 1000000, I rem 1000000}}
    end.

%% Event I (1-based). Op and Size come from a hash of I, so they are not
%% periodic in I (K = I rem 50 is).
event(I) ->
    H = erlang:phash2(I),
    {event, I, user(I rem 50), element(1 + H rem 5, {get, put, delete, post, head}),
     (H div 5) rem 10000}.

user(K) -> list_to_atom("user_" ++ integer_to_list(K)).

%% ---------------------------------------------------------------- writing

write(Dir) -> write(Dir, ?N).
write(Dir, N) -> write_set(Dir, "events", fun event/1, N, specs()).

write_real(Dir) -> write_real(Dir, ?N).
write_real(Dir, N) -> write_set(Dir, "real", fun real_event/1, N, real_specs()).

%% Events 1..N of Event as Dir/Name.etf, Name.p4 and Name.terms, and Specs.
write_set(Dir, Name, Event, N, Specs) ->
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Open = fun(Ext) ->
                   Path = filename:join(Dir, Name ++ Ext),
                   {ok, F} = file:open(Path, [write, raw, binary]),
                   F
           end,
    Etf = Open(".etf"),
    P4 = Open(".p4"),
    Text = Open(".terms"),
    write_chunks(Event, 1, N, Etf, P4, Text),
    [ok = file:close(F) || F <- [Etf, P4, Text]],
    write_specs(Dir, Specs).

write_chunks(_, I, N, _, _, _) when I > N -> ok;
write_chunks(Event, I, N, Etf, P4, Text) ->
    Last = min(N, I + ?CHUNK - 1),
    Es = [Event(J) || J <- lists:seq(I, Last)],
    Bins = [term_to_binary(E) || E <- Es],
    ok = file:write(Etf, Bins),
    ok = file:write(P4, [[<<(byte_size(B)):32>>, B] || B <- Bins]),
    ok = file:write(Text, [io_lib:format("~w.~n", [E]) || E <- Es]),
    write_chunks(Event, Last + 1, N, Etf, P4, Text).

write_specs(Dir, Specs) ->
    lists:foreach(
      fun({Name, Kind, MS}) ->
              ok = file:write_file(filename:join(Dir, atom_to_list(Name) ++ ".ms"),
                                   io_lib:format("~tw.~n", [{Kind, MS}]))
      end, Specs).

%% ---------------------------------------------------------------- dbg trace

%% The traced workload: ?WORKERS processes, each calling ?WL:handle/2 in a
%% loop and sending a message to a sink. An iteration makes 10 trace
%% messages: 8 calls (handle/2, lookup/2, maps:find/2, encode/1,
%% validate/1, lists:reverse/1, step/1, log/2), a send and its receive.
%% (maps:get/2 and /3 would not do: the compiler makes them instructions,
%% which call tracing does not see.) Calls of lists:reverse/1 and
%% maps:find/2 by other processes would be traced too (dbg:p(all, [c])).
-define(WORKERS, 4).

wl_source() ->
    "-module(" ++ atom_to_list(?WL) ++ ").
     -export([handle/2]).
     handle({req, Id, I, Op}, St) ->
         User = lookup(I rem 8, St),
         Bin = encode({Op, User, I}),
         ok = validate(Bin),
         L = lists:reverse([Op, User, Id]),
         _ = step(L),
         log(Op, byte_size(Bin)).
     lookup(K, St) -> {ok, V} = maps:find(K, St), V.
     encode(T) -> term_to_binary(T).
     validate(<<131, _/binary>>) -> ok.
     step([A | _]) -> A.
     log(Op, N) -> {Op, N}.
    ".

wl_funs() -> [{handle, 2}, {lookup, 2}, {encode, 1}, {validate, 1}, {step, 1}, {log, 2}].

load_wl() ->
    Forms = forms(wl_source()),
    {ok, Mod, Beam} = compile:forms(Forms, []),
    {module, Mod} = code:load_binary(Mod, "streams_wl.erl", Beam),
    ok.

forms(Src) ->
    {ok, Toks, _} = erl_scan:string(Src),
    [begin {ok, F} = erl_parse:parse_form(Ts), F end || Ts <- split_dots(Toks, [])].

split_dots([], []) -> [];
split_dots([{dot, _} = D | T], Acc) -> [lists:reverse([D | Acc]) | split_dots(T, [])];
split_dots([Tok | T], Acc) -> split_dots(T, [Tok | Acc]).

write_dbg(Dir) -> write_dbg(Dir, 1000000).
write_dbg(Dir, N) ->
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Path = filename:join(Dir, "workload.trace"),
    _ = file:delete(Path),
    ok = load_wl(),
    Iters = max(1, N div (10 * ?WORKERS)),
    St = maps:from_list([{K, list_to_binary("user_" ++ integer_to_list(K))} || K <- lists:seq(0, 7)]),
    {ok, _} = dbg:tracer(port, dbg:trace_port(file, Path)),
    {ok, _} = dbg:p(all, [c]),
    [{ok, _} = dbg:tpl(?WL, F, A, []) || {F, A} <- wl_funs()],
    {ok, _} = dbg:tpl(lists, reverse, 1, []),
    {ok, _} = dbg:tpl(maps, find, 2, []),
    Parent = self(),
    Sink = spawn(fun() -> receive go -> ok end, sink(?WORKERS * Iters), Parent ! sink_done end),
    Workers = [spawn(fun() -> receive go -> ok end, worker(Sink, W, 0, Iters, St) end)
               || W <- lists:seq(1, ?WORKERS)],
    {ok, _} = dbg:p(Sink, [r]),
    [{ok, _} = dbg:p(W, [s]) || W <- Workers],
    T0 = erlang:monotonic_time(millisecond),
    [P ! go || P <- [Sink | Workers]],
    receive sink_done -> ok end,
    T1 = erlang:monotonic_time(millisecond),
    {ok, _} = dbg:p(all, [clear]),
    Ref = erlang:trace_delivered(all),
    receive {trace_delivered, all, Ref} -> ok end,
    ok = dbg:flush_trace_port(),
    ok = dbg:stop(),
    write_specs(Dir, dbg_specs()),
    Size = filelib:file_size(Path),
    io:format("{\"file\":\"workload.trace\",\"bytes\":~w,\"workers\":~w,\"iterations\":~w,"
              "\"workload_ms\":~w}~n", [Size, ?WORKERS, Iters, T1 - T0]).

worker(_Sink, _W, I, I, _St) -> ok;
worker(Sink, W, I, Iters, St) ->
    Op = element(1 + erlang:phash2({W, I}) rem 5, {get, put, delete, post, head}),
    _ = ?WL:handle({req, W, I, Op}, St),
    Sink ! {done, W, I, Op},
    worker(Sink, W, I + 1, Iters, St).

sink(0) -> ok;
sink(N) -> receive {done, _, _, _} -> sink(N - 1) end.

%% ---------------------------------------------------------------- timing

erts(Dir) -> erts(Dir, 5).
erts(Dir, Rounds) ->
    Cases = [{File, Spec, Reader} || {File, Reader} <- [{"events.etf", etf},
                                                        {"events.p4", p4},
                                                        {"events.terms", erl_scan_lines},
                                                        {"events.terms", erl_scan_tokens}],
                                     Spec <- ["selective", "project"]]
        %% (real.terms has pids, which erl_parse does not read: no text.)
        ++ [{File, Spec, Reader} || {File, Reader} <- [{"real.etf", etf}, {"real.p4", p4}],
                                    Spec <- ["real_selective", "real_project"]]
        ++ [{"workload.trace", Spec, Reader} || Spec <- ["dbg_selective", "dbg_project"],
                                               Reader <- [trace_client, direct]],
    {ok, _} = dbg:start(),   % trace_client/3 needs the dbg server
    lists:foreach(
      fun({File, Spec, Reader}) ->
              Path = filename:join(Dir, File),
              case filelib:is_regular(Path) of
                  true -> run_case(Dir, Path, File, Spec, Reader, Rounds);
                  false -> io:format(standard_error, "skipping ~s: not found~n", [Path])
              end
      end, Cases),
    ok = dbg:stop().

run_case(Dir, Path, File, Spec, Reader, Rounds) ->
    {ok, [{table, MS}]} = file:consult(filename:join(Dir, Spec ++ ".ms")),
    Job = fun() -> read(Reader, Path, ets:match_spec_compile(MS)) end,
    {_, Counts} = one_round(Job),
    Times = lists:sort([begin {Ns, Counts} = one_round(Job), Ns end || _ <- lists:seq(1, Rounds)]),
    {Events, Matched} = Counts,
    Median = median(Times),
    Bytes = filelib:file_size(Path),
    io:format("{\"input\":\"~s\",\"spec\":\"~s\",\"engine\":\"erts\",\"reader\":\"~s\","
              "\"bytes\":~w,\"events\":~w,\"matched\":~w,\"rounds\":~w,"
              "\"ms_median\":~.1f,\"ms_min\":~.1f,\"mb_per_s\":~.1f,\"ns_per_event\":~.1f}~n",
              [File, Spec, Reader, Bytes, Events, Matched, Rounds,
               Median / 1.0e6, hd(Times) / 1.0e6, Bytes * 1.0e3 / Median,
               Median / Events]).

%% One run of Job in a fresh process: {Nanoseconds, Result}.
one_round(Job) ->
    {Pid, Ref} = spawn_monitor(
                   fun() ->
                           T0 = erlang:monotonic_time(nanosecond),
                           R = Job(),
                           T1 = erlang:monotonic_time(nanosecond),
                           exit({done, T1 - T0, R})
                   end),
    receive {'DOWN', Ref, process, Pid, {done, Ns, R}} -> {Ns, R};
            {'DOWN', Ref, process, Pid, Other} -> error({round_failed, Other})
    end.

median(Sorted) ->
    L = length(Sorted),
    case L rem 2 of
        1 -> lists:nth((L + 1) div 2, Sorted);
        0 -> (lists:nth(L div 2, Sorted) + lists:nth(L div 2 + 1, Sorted)) / 2
    end.

%% The readers: each returns {Events, Matched}.
read(etf, Path, C) -> {ok, Bin} = file:read_file(Path), etf(Bin, C, [], 0, 0, 0);
read(p4, Path, C) -> {ok, Bin} = file:read_file(Path), p4(Bin, C, [], 0, 0, 0);
read(erl_scan_lines, Path, C) -> {ok, Bin} = file:read_file(Path), lines(Bin, C, [], 0, 0, 0);
read(erl_scan_tokens, Path, C) -> {ok, Bin} = file:read_file(Path), text(Bin, C);
read(direct, Path, C) -> {ok, Bin} = file:read_file(Path), dbg_direct(Bin, C, [], 0, 0, 0);
read(trace_client, Path, C) -> dbg_client(Path, C).

%% Adds T to the batch, running the spec on a full batch.
push(T, B, BN, M, C) when BN + 1 >= ?BATCH -> {[], 0, M + length(ets:match_spec_run([T | B], C))};
push(T, B, BN, M, _C) -> {[T | B], BN + 1, M}.

finish(B, Ev, M, C) -> {Ev, M + length(ets:match_spec_run(B, C))}.

%% term_to_binary/1 terms back to back.
etf(<<>>, C, B, _BN, Ev, M) -> finish(B, Ev, M, C);
etf(Bin, C, B0, BN0, Ev, M0) ->
    {T, Used} = binary_to_term(Bin, [used]),
    <<_:Used/binary, Rest/binary>> = Bin,
    {B, BN, M} = push(T, B0, BN0, M0, C),
    etf(Rest, C, B, BN, Ev + 1, M).

%% {packet, 4}.
p4(<<Len:32, TB:Len/binary, Rest/binary>>, C, B0, BN0, Ev, M0) ->
    {B, BN, M} = push(binary_to_term(TB), B0, BN0, M0, C),
    p4(Rest, C, B, BN, Ev + 1, M);
p4(<<>>, C, B, _BN, Ev, M) -> finish(B, Ev, M, C).

%% Text, the fastest way found with the standard library: split the file at
%% newlines (binary:split/2), erl_scan:string/2 of each line as a list, then
%% erl_parse:parse_term/1. It assumes one term a line, as events.terms has.
lines(<<>>, C, B, _BN, Ev, M) -> finish(B, Ev, M, C);
lines(Bin, C, B0, BN0, Ev, M0) ->
    {Line, Rest} = case binary:split(Bin, <<"\n">>) of
                       [L, R] -> {L, R};
                       [L] -> {L, <<>>}
                   end,
    case erl_scan:string(binary_to_list(Line), 1) of
        {ok, [], _} -> lines(Rest, C, B0, BN0, Ev, M0);
        {ok, Toks, _} ->
            {ok, T} = erl_parse:parse_term(Toks),
            {B, BN, M} = push(T, B0, BN0, M0, C),
            lines(Rest, C, B, BN, Ev + 1, M)
    end.

%% Text, the general way: erl_scan:tokens/3 over 64 KiB pieces of the file, turned into
%% lists, then erl_parse:parse_term/1 on each term's tokens. It does not
%% assume one term a line.
text(Bin, C) -> text(Bin, [], C, [], 0, 0, 0).

text(Bin, Cont, C, B, BN, Ev, M) ->
    case Bin of
        <<>> ->
            case erl_scan:tokens(Cont, eof, 1) of
                {done, {eof, _}, _} -> finish(B, Ev, M, C);
                {done, {ok, Toks, _}, _} ->
                    {ok, T} = erl_parse:parse_term(Toks),
                    finish([T | B], Ev + 1, M, C)
            end;
        <<Piece:?READ_CHUNK/binary, Rest/binary>> ->
            text_piece(binary_to_list(Piece), Rest, Cont, C, B, BN, Ev, M);
        Piece ->
            text_piece(binary_to_list(Piece), <<>>, Cont, C, B, BN, Ev, M)
    end.

text_piece(Chars, Rest, Cont, C, B0, BN0, Ev, M0) ->
    case erl_scan:tokens(Cont, Chars, 1) of
        {more, Cont1} -> text(Rest, Cont1, C, B0, BN0, Ev, M0);
        {done, {ok, Toks, _}, More} ->
            {ok, T} = erl_parse:parse_term(Toks),
            {B, BN, M} = push(T, B0, BN0, M0, C),
            case More of
                eof -> text(Rest, [], C, B, BN, Ev + 1, M);
                _ -> text_piece(More, Rest, [], C, B, BN, Ev + 1, M)
            end;
        {done, {error, E, _}, _} -> error({scan, E})
    end.

%% The dbg trace port's file: <<0, Len:32, ETF>> a message, <<1, N:32>> for
%% N dropped ones (dbg:trace_client/3 hands these on as {drop, N}).
dbg_direct(<<0, Len:32, TB:Len/binary, Rest/binary>>, C, B0, BN0, Ev, M0) ->
    {B, BN, M} = push(binary_to_term(TB), B0, BN0, M0, C),
    dbg_direct(Rest, C, B, BN, Ev + 1, M);
dbg_direct(<<1, N:32, Rest/binary>>, C, B0, BN0, Ev, M0) ->
    {B, BN, M} = push({drop, N}, B0, BN0, M0, C),
    dbg_direct(Rest, C, B, BN, Ev + 1, M);
dbg_direct(<<>>, C, B, _BN, Ev, M) -> finish(B, Ev, M, C).

%% dbg:trace_client/3 reads the file in a process of its own and calls the
%% handler on each message, then on end_of_trace.
dbg_client(Path, C) ->
    Self = self(),
    Handler = fun(end_of_trace, {B, _BN, Ev, M}) ->
                      Self ! {trace_client_done, finish(B, Ev, M, C)};
                 (T, {B0, BN0, Ev, M0}) ->
                      {B, BN, M} = push(T, B0, BN0, M0, C),
                      {B, BN, Ev + 1, M}
              end,
    _ = dbg:trace_client(file, Path, {Handler, {[], 0, 0, 0}}),
    receive {trace_client_done, R} -> R end.
