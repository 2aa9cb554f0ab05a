#!/usr/bin/env escript
%% -*- erlang -*-
%% random-scenarios.escript SEED COUNT DIR [FIRST]
%%
%% Writes COUNT random trace scenarios (docs/scenarios.md) to DIR, named
%% random-SEED-NNNNN.scenario for NNNNN = FIRST .. FIRST + COUNT - 1 (FIRST
%% defaults to 1). Scenario NNNNN depends only on SEED and NNNNN, so any
%% one of them can be made again alone. generate.sh --random runs this and
%% then makes each scenario's golden file with run-scenario.escript; the
%% generator itself needs nothing but an Erlang/OTP (the goldens are made
%% with OTP 27).
%%
%% What the scenarios do
%% ---------------------
%% A scenario declares two modules, creates up to three sessions beside the
%% legacy one, spawns up to ten puppets, and then interleaves, at random:
%%
%% * host events: remote, local, tail and try calls, returns and raises
%%   (caught at various depths or not at all), spawns, allocations, and
%%   `do` steps (sends, receives, links, unlinks, trap_exit, exit signals,
%%   sequential tracing, garbage collection);
%% * configuration changes: trace:process/4 (one puppet, all, existing, new)
%%   and erlang:trace/3 with every process flag on and off, trace:function/4
%%   and erlang:trace_pattern/3 (local, global, meta, call_count, call_time,
%%   call_memory; true, false, pause, restart and match specs with
%%   return_trace, exception_trace, message, silent, caller, trace,
%%   enable_trace, disable_trace, seq tokens), send and receive patterns,
%%   sessions created and destroyed, tracer processes killed, the system
%%   sequential tracer, tracer modules;
%% * questions: trace:info/3, erlang:trace_info/2, trace:session_info/1,
%%   about traced, untraced and nonexistent functions, processes, ports and
%%   the other targets, with every item (unknown ones too);
%% * ports: puppets open `cat` ports, command them (as owner or not),
%%   control, call, link, unlink and close them; trace:port/4 and legacy
%%   port flags;
%% * steps of several actions: sends to others and to itself, receives of
%%   what it sent itself, links and unlinks, spawns, receive_timeout after
%%   them (the others run while it waits).
%%
%% Sessions are destroyed while processes are traced with running in
%% others (destroying a session schedules every process in and out), and
%% inheritance flags (set_on_spawn, set_on_link, and their first_ kinds)
%% are set in several sessions at once, so that the order of a process's
%% sessions shows.
%%
%% Each puppet aims at a stack depth drawn anew from time to time, so that
%% frames stay pending while the configuration changes under them, which is
%% where a trace core that decides at the wrong moment shows.
%%
%% The generator keeps a model of the world (stacks, queues, links, who is
%% alive) so that most events are valid; it stays inside what both the
%% scenario world of msc and run-scenario.escript define (no module_info
%% calls, no more than 16 non-tail steps in one activation, no `'_'`
%% module wildcards, no send/receive/running tracing of the driver and the
%% collectors), and out of the differences testdata/trace/README.md lists.

-mode(compile).

-define(STEP_LIMIT, 16).
-define(DRIVER, '$spid<0.70.0>').

%% A frame: {Module, Function, Arity, Catches, NonTailSteps}, innermost
%% first; Catches: the frame below called this one inside try ... catch.
-define(IDLE, {scenario, idle, 0, false, 0}).

-record(proc, {stack = [?IDLE],
               queue = 0,          % messages waiting in its queue
               links = [],         % puppets and ports it is linked to
               trap = false,
               name = none,        % its registered name
               target = 2}).       % the stack depth it aims at

%% An open port: its owner (linked to it from the start) and the puppets
%% linked to it.
-record(port, {owner, links = []}).

-record(st, {out = [],             % terms, newest first
             procs = #{},          % puppet name => #proc{}
             spawned = 0,          % puppets made so far (<0.80.0> ...)
             sessions = #{},       % name => tracer (a collector, undefined or a module)
             destroyed = [],       % sessions destroyed (names may come back)
             collectors = [],      % collectors named so far
             dead_collectors = [],
             system_tracer = false,
             ports = #{},          % open port => #port{}
             opened = 0}).         % ports opened so far (#Port<0.1> ...)

main([Seed, Count, Dir]) ->
    main([Seed, Count, Dir, "1"]);
main([Seed0, Count0, Dir, First0]) ->
    [Seed, Count, First] = [list_to_integer(A) || A <- [Seed0, Count0, First0]],
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    lists:foreach(
      fun(I) ->
              rand:seed(exsss, {Seed, I, 16#5ce}),
              Terms = scenario(),
              Name = io_lib:format("random-~w-~5..0w.scenario", [Seed, I]),
              Head = io_lib:format("% Random scenario ~w of seed ~w "
                                   "(testdata/trace/otp/random-scenarios.escript).~n",
                                   [I, Seed]),
              ok = file:write_file(filename:join(Dir, Name),
                                   [Head, [format(T) || T <- Terms]])
      end, lists:seq(First, First + Count - 1));
main(_) ->
    io:format(standard_error, "usage: random-scenarios.escript SEED COUNT DIR [FIRST]~n", []),
    halt(1).

%% Scenario pid and port literals are written as the atoms '$spid<A.B.C>'
%% and '$sport<0.N>' while generating, and printed as <A.B.C> and
%% #Port<0.N>.
format(T) ->
    Text = io_lib:format("~tkw.~n", [T]),
    T1 = re:replace(Text, "'\\$spid(<[0-9.]+>)'", "\\1", [global, unicode, {return, binary}]),
    re:replace(T1, "'\\$sport(<[0-9.]+>)'", "#Port\\1", [global, unicode, {return, binary}]).

spid(N) -> list_to_atom("$spid<0." ++ integer_to_list(N) ++ ".0>").
sport(N) -> list_to_atom("$sport<0." ++ integer_to_list(N) ++ ">").

%%% The world ---------------------------------------------------------------

modules() ->
    [{ma, [{f, 1}, {g, 1}, {h, 0}, {t, 2}, {l, 1, local}, {k, 0, local}]},
     {mb, [{f, 1}, {r, 1}, {l, 1, local}]}].

exported(M) -> [{F, A} || {F, A} <- proplists:get_value(M, modules())].
declared(M) -> [{F, A} || {F, A} <- exported(M)] ++
                   [{F, A} || {F, A, local} <- proplists:get_value(M, modules())].

scenario() ->
    St0 = lists:foldl(fun({M, Fs}, St) -> emit({module, M, Fs}, St) end,
                      #st{}, modules()),
    St1 = start(St0),
    Len = 40 + rand:uniform(80),
    St = steps(Len, St1),
    lists:reverse(St#st.out).

emit(T, St) -> St#st{out = [T | St#st.out]}.

%% A session or two and a puppet or two to begin with.
start(St0) ->
    St1 = create_session(St0),
    St2 = case rand:uniform(2) of 1 -> create_session(St1); 2 -> St1 end,
    St3 = spawn_puppet(?DRIVER, St2),
    case rand:uniform(2) of 1 -> spawn_puppet(?DRIVER, St3); 2 -> St3 end.

steps(0, St) -> St;
steps(N, St) -> steps(N - 1, step(St)).

step(St) ->
    Live = maps:keys(St#st.procs),
    Choices =
        [{30, fun host_event/1} || Live =/= []] ++
        [{6, fun process_command/1},
         {6, fun function_command/1},
         {2, fun legacy_trace/1},
         {2, fun legacy_pattern/1},
         {6, fun info/1},
         {1, fun message_pattern/1},
         {2, fun session_change/1},
         {1, fun port_command/1},
         {1, fun rare/1},
         {2, fun(S) -> spawn_puppet(spawner(S), S) end}],
    (pick(Choices))(St).

spawner(St) ->
    case [P || P <- maps:keys(St#st.procs), can_step(P, St)] of
        [] -> ?DRIVER;
        Ps -> one_of([?DRIVER | Ps])
    end.

%%% Random helpers ------------------------------------------------------------

pick(Weighted) ->
    Total = lists:sum([W || {W, _} <- Weighted]),
    pick(rand:uniform(Total), Weighted).

pick(R, [{W, X} | _]) when R =< W -> X;
pick(R, [{W, _} | T]) -> pick(R - W, T).

one_of(L) -> lists:nth(rand:uniform(length(L)), L).

chance(Percent) -> rand:uniform(100) =< Percent.

some_of(L, Max) ->
    N = rand:uniform(Max),
    lists:usort([one_of(L) || _ <- lists:seq(1, N)]).

value() -> one_of([1, 2, 3, 42, a, b, ok, {x}, [1, 2], {y, 7}, <<"bin">>]).

%%% Sessions and tracers --------------------------------------------------------

create_session(St) ->
    Free = [S || S <- [s1, s2, s3], not maps:is_key(S, St#st.sessions)],
    case Free of
        [] -> St;
        _ ->
            S = one_of(Free),
            Tracer = case rand:uniform(10) of
                         1 -> undefined;
                         2 -> tracer_module(St);
                         _ -> collector(St)
                     end,
            St1 = named(Tracer, emit({session_create, S, Tracer, []}, St)),
            St1#st{sessions = (St1#st.sessions)#{S => Tracer}}
    end.

%% A collector for a new tracer position: a fresh one mostly, sometimes one
%% in use (one tracer for several sessions or roles).
collector(St) ->
    Used = St#st.collectors -- St#st.dead_collectors,
    Fresh = [spid(N) || N <- lists:seq(90, 99)] -- St#st.collectors,
    case {Used, Fresh} of
        {[], []} -> undefined;
        {_, []} -> one_of(Used);
        {[], _} -> hd(Fresh);
        _ -> case chance(30) of true -> one_of(Used); false -> hd(Fresh) end
    end.

named(undefined, St) -> St;
named({tracer_test, {_, C, _}}, St) -> named(C, St);
named(C, St) ->
    case lists:member(C, St#st.collectors) of
        true -> St;
        false -> St#st{collectors = St#st.collectors ++ [C]}
    end.

%% {tracer_test, {Decisions, Collector, Extra}}: the tracer_SUITE module.
%% Its answers are trace or discard (remove is answered by ERTS at every
%% schedule-in, which the worlds do not model alike).
tracer_module(St) ->
    case collector(St) of
        undefined -> undefined;
        C ->
            Tags = [call, return_to, return_from, exception_from, spawn, exit,
                    link, send, 'receive', trace_status],
            Decisions = maps:from_list([{T, one_of([trace, trace, discard])}
                                        || T <- some_of(Tags, 6)]),
            {tracer_test, {Decisions, C, one_of([extra, 1, []])}}
    end.

live_sessions(St) -> maps:keys(St#st.sessions).

session_change(St) ->
    case {live_sessions(St), chance(50)} of
        {[], _} -> create_session(St);
        {_, true} -> create_session(St);
        {Ss, false} ->
            S = one_of(Ss),
            St1 = emit({session_destroy, S}, St),
            St1#st{sessions = maps:remove(S, St1#st.sessions),
                   destroyed = [S | St1#st.destroyed]}
    end.

%% A session name: a live one mostly, sometimes a destroyed or unknown one.
session(St) ->
    case {live_sessions(St), rand:uniform(20)} of
        {[], _} -> one_of([s1, s2, s3]);
        {_, 1} -> one_of([s1, s2, s3]);
        {Ss, _} -> one_of(Ss)
    end.

%%% Processes -------------------------------------------------------------------

puppets(St) -> maps:keys(St#st.procs).

%% Can P take one more non-tail step in its innermost activation?
can_step(P, St) ->
    case maps:find(P, St#st.procs) of
        {ok, #proc{stack = [{scenario, idle, 0, _, _} | _]}} -> true;
        {ok, #proc{stack = [{_, _, _, _, N} | _]}} -> N < ?STEP_LIMIT;
        error -> false
    end.

bump(P, St) ->
    update(P, fun(#proc{stack = [{M, F, A, C, N} | Rest]} = Pr) ->
                      Pr#proc{stack = [{M, F, A, C, N + 1} | Rest]}
              end, St).

update(P, Fun, St) ->
    case maps:find(P, St#st.procs) of
        {ok, Pr} -> St#st{procs = (St#st.procs)#{P := Fun(Pr)}};
        error -> St
    end.

spawn_puppet(Parent, St) ->
    case St#st.spawned < 10 of
        false -> St;
        true ->
            Child = spid(80 + St#st.spawned),
            New = #proc{target = rand:uniform(5)},
            St0 = St#st{spawned = St#st.spawned + 1, procs = (St#st.procs)#{Child => New}},
            case Parent of
                ?DRIVER -> emit({spawn, ?DRIVER, Child}, St0);
                _ ->
                    case rand:uniform(4) of
                        1 -> bump(Parent, emit({spawn, Parent, Child}, St0));
                        2 -> bump(Parent, emit({do, Parent, [{spawn, Child}]}, St0));
                        3 ->
                            %% spawn_link: linked both ways from the start.
                            St1 = bump(Parent, emit({do, Parent, [{spawn_link, Child}]}, St0)),
                            St2 = update(Parent, fun(Pr) -> Pr#proc{links = [Child | Pr#proc.links]} end, St1),
                            update(Child, fun(Pr) -> Pr#proc{links = [Parent]} end, St2);
                        4 ->
                            %% The child named by the step that spawns it.
                            St1 = bump(Parent, emit({do, Parent, [{spawn, Child}, {send, Child, value()}]}, St0)),
                            queued(Child, St1)
                    end
            end
    end.

%%% Host events -------------------------------------------------------------------

host_event(St) ->
    P = one_of(puppets(St)),
    #proc{stack = Stack, target = Target} = maps:get(P, St#st.procs),
    Depth = length(Stack),
    St1 = case chance(8) of
              true -> update(P, fun(Pr) -> Pr#proc{target = rand:uniform(6)} end, St);
              false -> St
          end,
    Deeper = case Depth < Target of true -> 6; false -> 1 end,
    Shallower = case Depth > Target of true -> 6; false -> 1 end,
    Choices =
        [{4 * Deeper, fun call/2} || can_step(P, St1)] ++
        [{2 * Shallower, fun return/2} || Depth > 1] ++
        [{1, fun return/2} || Depth =:= 1, chance(10)] ++
        [{Shallower, fun raise/2} || Depth > 1] ++
        [{1, fun tail_call/2}] ++
        [{3, fun do/2} || can_step(P, St1)] ++
        [{1, fun allocate/2} || can_step(P, St1)],
    (pick(Choices))(P, St1).

call(P, St) ->
    #proc{stack = [{M0, _, _, _, _} | _] = Stack} = maps:get(P, St#st.procs),
    Kinds = [{5, call}, {3, try_call}] ++ [{4, local_call} || M0 =/= scenario],
    Kind = pick(Kinds),
    {M, F, A} = callee(Kind, M0),
    Args = [value() || _ <- lists:seq(1, A)],
    [{TM, TF, TA, TC, TN} | Rest] = Stack,
    Stack1 = [{M, F, A, Kind =:= try_call, 0}, {TM, TF, TA, TC, TN + 1} | Rest],
    St1 = emit({Kind, P, {M, F, Args}}, St),
    set_stack(P, Stack1, St1).

callee(local_call, M0) ->
    {F, A} = one_of(declared(M0)),
    {M0, F, A};
callee(_, _) ->
    M = one_of([ma, ma, mb]),
    {F, A} = one_of(exported(M)),
    {M, F, A}.

tail_call(P, St) ->
    #proc{stack = [{M0, _, _, C, _} | Rest]} = maps:get(P, St#st.procs),
    Local = M0 =/= scenario andalso chance(50),
    {Kind, {M, F, A}} = case Local of
                            true -> {local_tail_call, callee(local_call, M0)};
                            false -> {tail_call, callee(call, M0)}
                        end,
    Args = [value() || _ <- lists:seq(1, A)],
    St1 = emit({Kind, P, {M, F, Args}}, St),
    set_stack(P, [{M, F, A, C, 0} | Rest], St1).

set_stack(P, Stack, St) ->
    update(P, fun(Pr) -> Pr#proc{stack = Stack} end, St).

return(P, St) ->
    #proc{stack = [_ | Rest]} = maps:get(P, St#st.procs),
    St1 = emit({return, P, value()}, St),
    case Rest of
        [] -> exited(P, normal, St1);
        _ -> set_stack(P, Rest, St1)
    end.

raise(P, St) ->
    #proc{stack = Stack} = maps:get(P, St#st.procs),
    Class = one_of([error, throw, exit]),
    Reason = one_of([boom, badarg, {bad, 1}]),
    St1 = emit({raise, P, Class, Reason}, St),
    case unwind(Stack) of
        {caught, Rest} -> set_stack(P, Rest, St1);
        uncaught ->
            ExitReason = case Class of
                             exit -> Reason;
                             error -> {Reason, []};
                             throw -> {{nocatch, Reason}, []}
                         end,
            exited(P, ExitReason, St1)
    end.

%% The frames left after an exception: the raising frame goes, and frames
%% down to the first one called inside a try, which goes too; the one below
%% caught it.
unwind([{_, _, _, true, _} | Rest]) -> {caught, Rest};
unwind([_ | []]) -> uncaught;
unwind([_ | Rest]) -> unwind(Rest).

allocate(P, St) ->
    bump(P, emit({allocate, P, rand:uniform(50)}, St)).

%%% Deaths --------------------------------------------------------------------------

%% P is gone with Reason: linked puppets get the exit signal.
exited(P, Reason, St) ->
    case maps:find(P, St#st.procs) of
        error -> St;
        {ok, #proc{links = Links}} ->
            St1 = St#st{procs = maps:remove(P, St#st.procs)},
            %% Its ports close with it, and so do the ports it is linked
            %% to if the reason is not normal.
            Owned = [Port || {Port, #port{owner = O}} <- maps:to_list(St1#st.ports), O =:= P],
            LinkedPorts = [L || L <- Links, not is_puppet_name(L)],
            Closing = lists:usort(Owned ++ [L || L <- LinkedPorts, Reason =/= normal]),
            St2 = lists:foldl(fun(Port, Acc) -> close_port(Port, Reason, Acc) end,
                              St1, Closing),
            lists:foldl(fun(Q, Acc) -> exit_signal(Q, P, Reason, linked, Acc) end,
                        St2, [L || L <- Links, is_puppet_name(L)])
    end.

%% Q gets an exit signal from P (through a link, or exit/2).
exit_signal(Q, P, Reason, How, St) ->
    case maps:find(Q, St#st.procs) of
        error -> St;
        {ok, #proc{trap = Trap} = Pr} ->
            Pr1 = case How of
                      linked -> Pr#proc{links = Pr#proc.links -- [P]};
                      signal -> Pr
                  end,
            St1 = St#st{procs = (St#st.procs)#{Q := Pr1}},
            if
                Reason =:= kill, How =:= signal -> exited(Q, killed, St1);
                Trap -> update(Q, fun(X) -> X#proc{queue = X#proc.queue + 1} end, St1);
                Reason =:= normal, Q =/= P -> St1;
                Reason =:= normal -> exited(Q, normal, St1);
                true -> exited(Q, reason(Reason), St1)
            end
    end.

reason(killed) -> killed;
reason(R) -> R.

%%% do steps ---------------------------------------------------------------------------

do(P, St) ->
    case chance(25) of
        true -> mixed(P, St);
        false -> single(P, St)
    end.

single(P, St) ->
    Others = puppets(St) -- [P],
    #proc{queue = Q, links = Links} = maps:get(P, St#st.procs),
    LinkedPuppets = [L || L <- Links, is_puppet_name(L)],
    Ports = maps:keys(St#st.ports),
    Choices =
        [{5, send} || Others =/= []] ++
        [{1, send_self}] ++
        [{4, 'receive'} || Q > 0] ++
        [{1, receive_timeout} || Q =:= 0] ++
        [{2, link} || Others -- Links =/= []] ++
        [{2, unlink} || LinkedPuppets =/= []] ++
        [{2, trap_exit}, {1, garbage_collect}] ++
        [{2, seq_trace} || Others =/= []] ++
        [{1, exit_other} || Others =/= []] ++
        [{1, exit_self}] ++
        [{1, register}] ++
        [{2, open_port} || St#st.opened < 6] ++
        [{3, port_op} || Ports =/= []],
    Action = pick(Choices),
    action(Action, P, Others, St).

is_puppet_name(A) -> lists:prefix("$spid<", atom_to_list(A)).

action(send, P, Others, St) ->
    To = one_of(Others),
    St1 = bump(P, emit({do, P, [{send, To, value()}]}, St)),
    queued(To, St1);
action(send_self, P, _, St) ->
    St1 = bump(P, emit({do, P, [{send, P, value()}]}, St)),
    queued(P, St1);
action('receive', P, _, St) ->
    St1 = bump(P, emit({do, P, ['receive']}, St)),
    update(P, fun(Pr) -> Pr#proc{queue = Pr#proc.queue - 1} end, St1);
action(receive_timeout, P, _, St) ->
    bump(P, emit({do, P, [receive_timeout]}, St));
action(link, P, Others, St) ->
    #proc{links = Links} = maps:get(P, St#st.procs),
    Q = one_of(Others -- Links),
    St1 = bump(P, emit({do, P, [{link, Q}]}, St)),
    link_model(P, Q, St1);
action(unlink, P, _, St) ->
    #proc{links = Links} = maps:get(P, St#st.procs),
    Q = one_of([L || L <- Links, is_puppet_name(L)]),
    St1 = bump(P, emit({do, P, [{unlink, Q}]}, St)),
    unlink_model(P, Q, St1);
action(trap_exit, P, _, St) ->
    B = one_of([true, false]),
    St1 = bump(P, emit({do, P, [{trap_exit, B}]}, St)),
    update(P, fun(Pr) -> Pr#proc{trap = B} end, St1);
action(garbage_collect, P, _, St) ->
    bump(P, emit({do, P, [garbage_collect]}, St));
action(seq_trace, P, Others, St0) ->
    St = case St0#st.system_tracer of
             false ->
                 C = collector(St0),
                 S1 = emit({system_tracer, C}, St0),
                 named(C, S1#st{system_tracer = true});
             true -> St0
         end,
    To = one_of(Others),
    Flags = some_of([send, 'receive', print, timestamp], 3),
    Actions = [{seq_trace, label, rand:uniform(9)}] ++
        [{seq_trace, F, true} || F <- Flags] ++
        [{seq_trace_print, hello} || chance(30)] ++
        [{send, To, value()}],
    St1 = bump(P, emit({do, P, Actions}, St)),
    queued(To, St1);
action(exit_other, P, Others, St) ->
    Q = one_of(Others),
    Reason = one_of([normal, kill, bye]),
    St1 = bump(P, emit({do, P, [{exit, Q, Reason}]}, St)),
    exit_signal(Q, P, Reason, signal, St1);
action(exit_self, P, _, St) ->
    Reason = one_of([normal, bye]),
    St1 = emit({do, P, [{exit, Reason}]}, St),
    exited(P, Reason, St1);
action(register, P, _, St) ->
    #proc{name = Name} = maps:get(P, St#st.procs),
    case Name of
        none ->
            N = one_of([alpha, beta, gamma]),
            Taken = [X || #proc{name = X} <- maps:values(St#st.procs)],
            St1 = bump(P, emit({do, P, [{register, N}]}, St)),
            case lists:member(N, Taken) of
                true -> St1;
                false -> update(P, fun(Pr) -> Pr#proc{name = N} end, St1)
            end;
        _ ->
            %% Now and then a message to its own name first.
            Acts = [{send, Name, value()} || chance(30)] ++ [{unregister, Name}],
            St1 = bump(P, emit({do, P, Acts}, St)),
            St2 = case length(Acts) of 2 -> queued(P, St1); 1 -> St1 end,
            update(P, fun(Pr) -> Pr#proc{name = none} end, St2)
    end;
action(open_port, P, _, St) ->
    N = St#st.opened + 1,
    Port = sport(N),
    St1 = bump(P, emit({do, P, [{open_port, Port, cat}]}, St#st{opened = N})),
    St2 = St1#st{ports = (St1#st.ports)#{Port => #port{owner = P}}},
    update(P, fun(Pr) -> Pr#proc{links = [Port | Pr#proc.links]} end, St2);
action(port_op, P, _, St) ->
    Port = one_of(maps:keys(St#st.ports)),
    #port{owner = Owner, links = PortLinks} = maps:get(Port, St#st.ports),
    #proc{links = Links} = maps:get(P, St#st.procs),
    Linked = lists:member(Port, Links),
    Op = pick([{4, command}, {1, control}, {1, call}, {2, close}] ++
                  [{2, link} || not Linked] ++ [{2, unlink} || Linked]),
    case Op of
        command ->
            St1 = bump(P, emit({do, P, [{port_command, Port, one_of([<<"a">>, <<"hello">>])}]}, St)),
            %% The owner waits for the echo; anyone else's goes to the owner.
            case Owner of
                P -> St1;
                _ -> queued(Owner, St1)
            end;
        control ->
            bump(P, emit({do, P, [{port_control, Port, rand:uniform(3), <<"x">>}]}, St));
        call ->
            bump(P, emit({do, P, [{port_call, Port, rand:uniform(3), x}]}, St));
        close ->
            St1 = bump(P, emit({do, P, [{port_close, Port}]}, St)),
            close_port(Port, normal, St1);
        link ->
            St1 = bump(P, emit({do, P, [{link, Port}]}, St)),
            St2 = update(P, fun(Pr) -> Pr#proc{links = [Port | Pr#proc.links]} end, St1),
            St2#st{ports = (St2#st.ports)#{Port := #port{owner = Owner, links = [P | PortLinks]}}};
        unlink ->
            St1 = bump(P, emit({do, P, [{unlink, Port}]}, St)),
            St2 = update(P, fun(Pr) -> Pr#proc{links = Pr#proc.links -- [Port]} end, St1),
            St2#st{ports = (St2#st.ports)#{Port := #port{owner = Owner, links = PortLinks -- [P]}}}
    end.

%% A step of several actions that leave nothing to wait for but a timeout:
%% sends to others and to itself, receives (of what it sent itself too),
%% links, unlinks, a spawn, trap_exit, and receive_timeout while nothing is
%% queued (the others run while it waits).
mixed(P, St0) ->
    N = 2 + rand:uniform(3),
    {Acts, St} = mixed(N, P, [], St0),
    case Acts of
        [] -> St;
        _ -> bump(P, St#st{out = [{do, P, lists:reverse(Acts)} | St#st.out]})
    end.

mixed(0, _P, Acts, St) -> {Acts, St};
mixed(N, P, Acts, St) ->
    case maps:find(P, St#st.procs) of
        error -> {Acts, St};
        {ok, #proc{queue = Q, links = Links}} ->
            Others = puppets(St) -- [P],
            Spawned = [C || {S, C} <- Acts, S =:= spawn orelse S =:= spawn_link],
            Choices =
                [{4, send} || Others =/= []] ++
                [{3, send_self}] ++
                [{3, 'receive'} || Q > 0] ++
                [{2, receive_timeout} || Q =:= 0] ++
                [{2, link} || Others -- Links =/= []] ++
                [{2, unlink} || [L || L <- Links, is_puppet_name(L)] =/= []] ++
                [{1, trap_exit}] ++
                [{1, spawn} || Spawned =:= [], St#st.spawned < 10],
            {Act, St1} = mixed_action(pick(Choices), P, Others, St),
            mixed(N - 1, P, [Act | Acts], St1)
    end.

mixed_action(send, _P, Others, St) ->
    To = one_of(Others),
    {{send, To, value()}, queued(To, St)};
mixed_action(send_self, P, _, St) ->
    {{send, P, value()}, queued(P, St)};
mixed_action('receive', P, _, St) ->
    {'receive', update(P, fun(Pr) -> Pr#proc{queue = Pr#proc.queue - 1} end, St)};
mixed_action(receive_timeout, _P, _, St) ->
    {receive_timeout, St};
mixed_action(link, P, Others, St) ->
    #proc{links = Links} = maps:get(P, St#st.procs),
    Q = one_of(Others -- Links),
    {{link, Q}, link_model(P, Q, St)};
mixed_action(unlink, P, _, St) ->
    #proc{links = Links} = maps:get(P, St#st.procs),
    Q = one_of([L || L <- Links, is_puppet_name(L)]),
    {{unlink, Q}, unlink_model(P, Q, St)};
mixed_action(trap_exit, P, _, St) ->
    B = one_of([true, false]),
    {{trap_exit, B}, update(P, fun(Pr) -> Pr#proc{trap = B} end, St)};
mixed_action(spawn, P, _, St) ->
    Child = spid(80 + St#st.spawned),
    New = #proc{target = rand:uniform(5)},
    St1 = St#st{spawned = St#st.spawned + 1, procs = (St#st.procs)#{Child => New}},
    case chance(50) of
        true -> {{spawn, Child}, St1};
        false -> {{spawn_link, Child}, link_model(P, Child, St1)}
    end.

link_model(P, Q, St) ->
    St1 = update(P, fun(Pr) -> Pr#proc{links = [Q | Pr#proc.links]} end, St),
    update(Q, fun(Pr) -> Pr#proc{links = [P | Pr#proc.links]} end, St1).

unlink_model(P, Q, St) ->
    St1 = update(P, fun(Pr) -> Pr#proc{links = Pr#proc.links -- [Q]} end, St),
    update(Q, fun(Pr) -> Pr#proc{links = Pr#proc.links -- [P]} end, St1).

%% Port is closed with Reason: the puppets linked to it get its exit signal.
close_port(Port, Reason, St) ->
    case maps:find(Port, St#st.ports) of
        error -> St;
        {ok, #port{owner = Owner, links = Links}} ->
            St1 = St#st{ports = maps:remove(Port, St#st.ports)},
            Linked = [Q || {Q, #proc{links = L}} <- maps:to_list(St1#st.procs),
                           lists:member(Port, L)],
            _ = {Owner, Links},
            lists:foldl(fun(Q, Acc) -> exit_signal(Q, Port, Reason, linked, Acc) end,
                        St1, Linked)
    end.

queued(To, St) ->
    update(To, fun(Pr) -> Pr#proc{queue = Pr#proc.queue + 1} end, St).

%%% Commands -----------------------------------------------------------------------------

%% Flags for all and existing, which reach the driver and the collectors
%% too. run-scenario.escript's driver spawns (and links) the collectors,
%% which msc's world makes as new processes, without events or
%% inheritance: no procs and no set_on_* flags here.
existing_flags() ->
    [call, call, call, return_to, return_to, arity, silent, timestamp,
     monotonic_timestamp, strict_monotonic_timestamp, scheduler_id].

%% Flags for new processes (puppets and collectors made later).
new_flags() ->
    existing_flags() ++ [set_on_spawn, set_on_first_spawn, set_on_link, set_on_first_link].

%% Flags that show a process's traffic: only on puppets named one by one.
puppet_flags() ->
    new_flags() ++ [procs, procs, send, 'receive', running, exiting, garbage_collection].

%% Which processes, and flags that fit them, for session S. Only s1 traces
%% garbage_collection: ERTS 27.3.4 crashes when a process's collection is
%% traced in two sessions (testdata/trace/README.md, "ERTS crashes").
process_spec(St, S) ->
    Puppet = case S of
                 s1 -> puppet_flags();
                 _ -> puppet_flags() -- [garbage_collection]
             end,
    Inherit = [set_on_spawn, set_on_link, set_on_first_spawn, set_on_first_link],
    case {puppets(St), rand:uniform(10)} of
        {Ps, R} when Ps =/= [], R =< 1 ->
            %% Inheritance with events that show whose sessions a new
            %% process or a linked one gets, and in which order.
            {one_of(Ps), some_of(Inherit, 2) ++ some_of([procs, send, 'receive', timestamp,
                                                         running], 2)};
        {Ps, R} when Ps =/= [], R =< 7 -> {one_of(Ps), some_of(Puppet, 4)};
        {_, R} when R =< 9 -> {new, some_of(new_flags(), 4)};
        {_, _} -> {one_of([all, existing]), some_of(existing_flags(), 4)}
    end.

process_command(St) ->
    S = session(St),
    How = chance(65),
    {Spec, Flags0} = process_spec(St, S),
    {Flags, St1} = with_tracer(S, How, Flags0, St),
    emit({process, S, Spec, How, Flags}, St1).

%% A {tracer, C} flag where the session has none (or now and then anyway,
%% which trace:process/4 refuses); sometimes a tracer module.
with_tracer(S, true, Flags, St) ->
    case maps:get(S, St#st.sessions, none) =:= undefined orelse chance(3) of
        true ->
            case tracer_module(St) of
                {tracer_test, State} when element(2, State) =/= undefined ->
                    case chance(20) of
                        true -> {Flags ++ [{tracer, tracer_test, State}], named({tracer_test, State}, St)};
                        false -> plain_tracer(Flags, St)
                    end;
                _ -> plain_tracer(Flags, St)
            end;
        false -> {Flags, St}
    end;
with_tracer(_, false, Flags, St) -> {Flags, St}.

plain_tracer(Flags, St) ->
    C = collector(St),
    {Flags ++ [{tracer, C}], named(C, St)}.

%% trace:port/4, or legacy erlang:trace/3 on ports: one port (flags for
%% ports, and process flags, which a port takes too), all, existing or
%% new ports.
port_command(St) ->
    Flags0 = some_of([ports, ports, running_ports, send, 'receive', timestamp,
                      strict_monotonic_timestamp, call, procs], 3),
    Spec = case maps:keys(St#st.ports) of
               [] -> one_of([new, new_ports, all, existing]);
               Ports -> one_of(Ports ++ Ports ++ [new_ports, all, existing])
           end,
    How = chance(70),
    case chance(25) of
        true ->
            %% Legacy: ports by name, the driver the tracer by default.
            LSpec = case Spec of
                        new -> new_ports;
                        all -> ports;
                        existing -> existing_ports;
                        _ -> Spec
                    end,
            {Flags, St1} = case How andalso chance(60) of
                               true -> plain_tracer(Flags0, St);
                               false -> {Flags0, St}
                           end,
            emit({erlang_trace, LSpec, How, Flags}, St1);
        false ->
            S = session(St),
            {Flags, St1} = with_tracer(S, How, Flags0, St),
            emit({port, S, Spec, How, Flags}, St1)
    end.

legacy_trace(St) ->
    How = chance(65),
    {Spec, Flags0} = process_spec(St, legacy),
    %% Without a tracer the driver gets the messages.
    {Flags, St1} = case How andalso chance(60) of
                       true ->
                           C = collector(St),
                           {Flags0 ++ [{tracer, C}], named(C, St)};
                       false -> {Flags0, St}
                   end,
    emit({erlang_trace, Spec, How, Flags}, St1).

mfa() ->
    case rand:uniform(10) of
        1 -> {one_of([ma, mb]), '_', '_'};
        2 -> {ma, f, '_'};
        _ ->
            M = one_of([ma, ma, mb]),
            {F, A} = one_of(declared(M)),
            {M, F, A}
    end.

%% Match specs for call patterns: return frames, messages, silent, the
%% flags of the caller changed from inside, sequential trace tokens.
match_spec() ->
    one_of(
      [[],
       [{'_', [], [{return_trace}]}],
       [{'_', [], [{return_trace}]}],
       [{'_', [], [{exception_trace}]}],
       [{'_', [], [{exception_trace}]}],
       [{'_', [], [{return_trace}, {message, false}]}],
       [{'_', [], [{exception_trace}, {message, {caller}}]}],
       [{'_', [], [{message, {caller}}]}],
       [{'_', [], [{message, false}]}],
       [{'_', [], [{silent, true}]}],
       [{'_', [], [{silent, false}, {return_trace}]}],
       [{'_', [], [{silent, true}, {exception_trace}]}],
       [{'_', [], [{trace, [], [return_to]}]}],
       [{'_', [], [{trace, [return_to], []}, {return_trace}]}],
       [{'_', [], [{trace, [call], []}]}],
       [{'_', [], [{enable_trace, arity}]}],
       [{'_', [], [{disable_trace, arity}, {exception_trace}]}],
       [{'_', [], [{enable_trace, timestamp}]}],
       [{'_', [], [{enable_trace, procs}, {return_trace}]}],
       [{'_', [], [{disable_trace, silent}]}],
       [{'_', [], [{is_seq_trace}]}],
       [{[1], [], [{return_trace}]}, {'_', [], [{message, false}]}],
       [{['$1'], [{is_integer, '$1'}], [{exception_trace}, {message, '$1'}]}],
       [{['$1'], [{'=:=', '$1', a}], [{silent, true}]},
        {['$1'], [{'=:=', '$1', b}], [{silent, false}]}],
       [{'$1', [], [{message, {length, '$1'}}, {return_trace}]}]]).

function_command(St) ->
    S = session(St),
    Tracer = maps:get(S, St#st.sessions, none),
    {Pattern, Flags, St1} = pattern(Tracer, St),
    emit({function, S, mfa(), Pattern, Flags}, St1).

legacy_pattern(St) ->
    {Pattern, Flags, St1} = pattern(legacy, St),
    emit({erlang_trace_pattern, mfa(), Pattern, Flags}, St1).

pattern(Tracer, St) ->
    case rand:uniform(12) of
        N when N =< 5 ->
            {spec_or_bool(), [one_of([local, local, global])], St};
        6 ->
            {spec_or_bool(), [local, call_count], St};
        7 ->
            {Meta, St1} = meta(Tracer, St),
            {spec_or_bool(), [Meta], St1};
        8 ->
            {one_of([true, false, restart, pause]), [call_count], St};
        9 ->
            {one_of([true, true, false, restart, pause]), [call_time], St};
        10 ->
            {one_of([true, true, false, restart, pause]), [call_memory], St};
        11 ->
            {false, [one_of([local, global, meta, call_count, call_time, call_memory])], St};
        12 ->
            {spec_or_bool(), [global], St}
    end.

spec_or_bool() ->
    case rand:uniform(8) of
        1 -> true;
        2 -> false;
        _ -> match_spec()
    end.

%% The meta flag: the session's own tracer, or {meta, C} where the session
%% has none (the legacy session always needs one).
meta(Tracer, St) when Tracer =:= undefined; Tracer =:= legacy; Tracer =:= none ->
    C = collector(St),
    {{meta, C}, named(C, St)};
meta(_, St) ->
    {meta, St}.

message_pattern(St) ->
    S = session(St),
    Pattern = one_of([true, false,
                      [{'_', [], [{message, {caller}}]}],
                      [{['_', a], [], []}],
                      [{['_', '_', '_'], [], [{message, false}]}],
                      [{'_', [], [{silent, true}]}]]),
    Kind = one_of([send, recv]),
    emit({Kind, S, Pattern, []}, St).

info(St) ->
    S = session(St),
    Items = [traced, match_spec, meta, meta_match_spec, call_count, call_time,
             call_memory, all],
    Odd = [flags, tracer, session, foo, 42],
    Ports = maps:keys(St#st.ports),
    case rand:uniform(9) of
        1 ->
            What = one_of(puppets(St) ++ [new, ?DRIVER, spid(99)] ++ Ports),
            emit({info, S, What, one_of([flags, tracer, flags, tracer, all, session, foo])}, St);
        2 ->
            Item = one_of(Items ++ Odd),
            emit({info, S, any_mfa(), Item}, St);
        3 ->
            emit({session_info, one_of(puppets(St) ++ [any_mfa(), new_processes, spid(99)]
                                       ++ Ports ++ [new_ports, all])}, St);
        4 ->
            What = one_of(puppets(St) ++ [new] ++ Ports),
            emit({erlang_trace_info, What, one_of([flags, tracer, flags, tracer, foo])}, St);
        5 ->
            Item = one_of(Items ++ Odd),
            emit({erlang_trace_info, any_mfa(), Item}, St);
        6 ->
            emit({info, S, one_of([send, 'receive']), one_of([match_spec, match_spec, all])}, St);
        7 ->
            emit({info, S, one_of([new_ports, on_load]), one_of([flags, tracer, match_spec, all])}, St);
        _ ->
            %% A question about a function nobody traces now.
            Question = case chance(50) of
                           true -> {info, S, untraced_mfa(), one_of(Items ++ Odd)};
                           false -> {erlang_trace_info, untraced_mfa(), one_of(Items ++ Odd)}
                       end,
            emit(Question, St)
    end.

concrete_mfa() ->
    M = one_of([ma, mb]),
    {F, A} = one_of(declared(M)),
    {M, F, A}.

%% A declared function, or one that does not exist (a missing function,
%% arity or module).
any_mfa() ->
    case rand:uniform(6) of
        1 -> one_of([{ma, nosuch, 0}, {ma, f, 3}, {mc, f, 1}, {ma, module_info, 0}]);
        _ -> concrete_mfa()
    end.

untraced_mfa() ->
    one_of([{ma, k, 0}, {mb, r, 1}, {ma, nosuch, 0}, {mc, f, 1}, {ma, module_info, 1}]).

%% Now and then: kill a tracer, a clock tick, a sequential trace reset.
rare(St) ->
    case rand:uniform(4) of
        1 ->
            case St#st.collectors -- St#st.dead_collectors of
                [] -> St;
                Cs ->
                    C = one_of(Cs),
                    St1 = emit({do, ?DRIVER, [{exit, C, kill}]}, St),
                    St1#st{dead_collectors = [C | St1#st.dead_collectors]}
            end;
        2 -> emit({advance_clock, rand:uniform(1000)}, St);
        3 -> emit({reset_seq_trace}, St);
        4 ->
            case puppets(St) of
                [] -> St;
                Ps -> emit({seq_token, one_of(Ps)}, St)
            end
    end.
