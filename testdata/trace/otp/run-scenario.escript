#!/usr/bin/env escript
%% -*- erlang -*-
%%! +S 1
%% run-scenario.escript SCENARIO
%%
%% Runs one trace scenario (docs/scenarios.md) on a real Erlang/OTP 27 VM and
%% prints what `msc trace --mask-timestamps SCENARIO` is expected to print:
%% for every term `{reply, Tag, Reply}.`, then the trace messages the term
%% caused as `{Tracer, Message}.`, grouped by tracer (the driver first, then
%% the tracers in the order commands first name them), timestamps replaced by
%% '$ts'.
%%
%% Run it inside the OTP 27 chroot, e.g.
%%
%%     chroot /opt/otp27 escript /tmp/scenario-gen/run-scenario.escript \
%%         /tmp/scenario-gen/basic.scenario
%%
%% testdata/trace/otp/generate.sh does this for every scenario.
%%
%% How the scenario world is made real
%% -----------------------------------
%% * The escript process is the driver <0.70.0>: it runs every command (it is
%%   the "caller" of legacy erlang:trace/3 and erlang:trace_pattern/3, so it
%%   may be a tracer itself) and drives every host event.
%% * A pid in a tracer position ({session_create, _, Tracer, _}, {tracer, P},
%%   {meta, P}, {tracer|meta, Mod, P}, anywhere in a command) that does not
%%   exist yet becomes a collector process that keeps the messages it gets
%%   until the driver drains it. So does the collector of a tracer module's
%%   state (the second element of State in {tracer|meta, tracer_test, State}
%%   and in a session tracer {tracer_test, State}). Until a pid is spawned or
%%   becomes a collector it stands for a dead process (a real pid that has
%%   exited, made before the first term runs).
%% * Tracer module tracer_test: if the scenario names the atom tracer_test,
%%   module tracer_test is loaded before the first term runs, with the NIFs
%%   enabled/3 and trace/5 of tracer_test.so next to this script (built from
%%   tracer_test.c by generate.sh); its tracer_test.beam is written there too
%%   and the directory put on the code path, so {code_load, tracer_test}
%%   (code:load_file/1) and loading on demand find it. It forwards {Tag, State, Tracee, Msg,
%%   Opts} to the collector, which prints it like any trace message.
%% * The VM runs one scheduler (+S 1 above), so scheduler_id is always 1.
%% * {spawn, Parent, Child}: Parent (the driver or a puppet) calls
%%   erlang:spawn(scenario, idle, []). Module `scenario` is compiled here; its
%%   idle/0 loop receives steps from the driver and performs calls from its
%%   own body, so {caller} and return_to show {scenario, idle, 0}. The idle
%%   loop is the process's bottom function as in msc: returning or raising
%%   from it ends the process, and a tail call replaces it (the process ends
%%   when the called function returns).
%% * {node, Name} starts distribution (long names), {peer, Name} a peer node
%%   (peer:start_link/1) with modules scenario and scenario_act loaded.
%%   Remote pid literals #Pid<'node@host'.C.I.S> are read as atoms
%%   '$rpid<node@host.C.I.S>' and stand for the processes spawned for them
%%   on the peer; remote puppets take do steps like local ones.
%% * {module, M, Functions}: Erlang source is generated with exactly those
%%   functions (plus the compiler's module_info/0,1), compiled with
%%   compile:forms/2 and loaded with code:load_binary/3. Every body receives
%%   steps from the driver. Up to ?SLOTS non-tail steps (remote call via
%%   apply/3, local call via a `case` over the module's functions, remote call
%%   inside try ... catch, spawn) run one after the other in the same frame;
%%   the tail step (return, erlang:raise/3, remote or local tail call) is the
%%   function's last expression. The generated module has no other
%%   functions and no funs, so pattern counts are exact.
%% * After every term the driver waits until each affected process is blocked
%%   in its next receive, in the function the scenario model says is innermost
%%   (or has exited), then calls erlang:trace_delivered(all) and drains the
%%   collectors (and its own mailbox) in tracer order. Answers of ports a
%%   step waits for are awaited first (watch_opens/2). Processes of peer
%%   nodes settle too (settle_remote/1).
%% * Real pids are printed as the scenario's pid literals; a pid the scenario
%%   does not know prints as '$unknown_pid'. Session handles and the weak
%%   session references {Name, WeakId} that trace:session_info/1 returns print
%%   as Name.
%% * trace:process/4, trace:port/4 and erlang:trace/3 on all / existing /
%%   processes / existing_processes (ports / existing_ports) count every
%%   process (port) of the VM. The reply printed is that count minus the
%%   processes outside the scenario world (every port is outside it), which
%%   is what a VM holding only the scenario's processes would return.
%%
%% Deliberate deviations and what cannot be run faithfully are listed in
%% testdata/trace/README.md.

-mode(compile).

-define(DRIVER, '$spid<0.70.0>').
-define(STEP, '$scenario_step').
-define(SLOTS, 16).
-define(WAIT_MS, 10000).
%% How long a term waits for system monitor messages once a session monitors.
-define(SYSMON_MS, 20).

%% World state.
-record(w, {pids = #{},        % scenario pid atom -> real pid (current)
            rev = #{},         % real pid -> scenario pid atom (all ever)
            kind = #{},        % scenario pid atom -> driver|collector|puppet|dead
            stacks = #{},      % puppet -> [frame()] (innermost first; [] = idle)
            mons = #{},        % remote puppet -> monitor ref
            modules = #{},     % module -> [{F, Arity, exported|local}]
            remotes = [],      % live puppets on peer nodes
            links = #{},       % puppet -> [puppet] (asking the VM would
                               % schedule the puppet in: see wait_state/2)
            sessions = #{},    % session name -> handle
            tracers = #{},     % session name -> its tracer (real)
            owners = #{},      % port literal -> the puppet that opened it
            order = []}).      % tracers in print order: the driver, then
                               % collectors in the order they were made

%% frame(): {M, F, Arity, Catches, NonTailStepsDone}

main([File]) ->
    try
        run(File)
    catch
        C:R:St ->
            io:format(standard_error, "run-scenario: ~p:~p~nwhile running ~p~n~p~n",
                      [C, R, get(current_term), St]),
            halt(2)
    end;
main(_) ->
    io:format(standard_error, "usage: run-scenario.escript SCENARIO~n", []),
    halt(1).

run(File) ->
    ok = io:setopts(standard_io, [{encoding, unicode}]),
    %% Puppets that die of an uncaught exception must not print crash
    %% reports into the output.
    ok = logger:set_primary_config(level, none),
    %% Puppets and collectors start with heaps no scenario fills: a real
    %% garbage collection would schedule a puppet out and in again in the
    %% middle of a step (and show with garbage_collection tracing), where
    %% msc's world, which has no heap, never collects on its own.
    _ = erlang:system_flag(min_heap_size, 100000),
    process_flag(trap_exit, true),
    Terms = read_scenario(File),
    load_idle_module(),
    load_act_module(),
    {module, seq_trace} = code:ensure_loaded(seq_trace),
    case names_atom(tracer_test, Terms) of
        true -> load_tracer_test();
        false -> ok
    end,
    case names_atom(open_port, Terms) orelse names_atom(port_command, Terms)
        orelse names_atom(receive_timeout, Terms) of
        true -> watch_session();
        false -> ok
    end,
    Self = self(),
    %% The group leader shows in spawn requests (sequential tracing).
    GL = group_leader(),
    W0 = #w{pids = #{?DRIVER => Self}, rev = #{Self => ?DRIVER, GL => '$spid<0.60.0>'},
            kind = #{?DRIVER => driver},
            order = [?DRIVER]},
    lists:foldl(fun run_term/2, placeholders(W0, Terms), Terms),
    %% Printed only now: printing is messages to the group leader, which a
    %% scenario tracing the driver's sends (`existing`, `all`) would see.
    io:put_chars(lists:reverse(get(output))),
    halt(0).

%%% Reading ----------------------------------------------------------------

%% Scenario pid literals <A.B.C> are not Erlang syntax; they are read as the
%% atoms '$spid<A.B.C>' and printed back the same way.
read_scenario(File) ->
    {ok, Bin} = file:read_file(File),
    Text00 = unicode:characters_to_list(Bin),
    %% #Pid<'node@host'.Creation.Id.Serial> (another node's) reads as the
    %% atom '$rpid<node@host.Creation.Id.Serial>'.
    Text0 = re:replace(Text00, "#Pid<'?([^'>]*)'?\\.([0-9]+\\.[0-9]+\\.[0-9]+)>",
                       "'$rpid<\\1.\\2>'", [global, unicode, {return, list}]),
    Text1 = re:replace(Text0, "#Port<([0-9]+\\.[0-9]+)>", "'$sport<\\1>'",
                       [global, unicode, {return, list}]),
    Text = re:replace(Text1, "(?<!sport)<([0-9]+\\.[0-9]+\\.[0-9]+)>", "'$spid<\\1>'",
                      [global, unicode, {return, list}]),
    {ok, Toks, _} = erl_scan:string(Text),
    parse_terms(Toks, []).

parse_terms([], []) -> [];
parse_terms([{dot, _} = Dot | T], Acc) ->
    {ok, Term} = erl_parse:parse_term(lists:reverse([Dot | Acc])),
    [Term | parse_terms(T, [])];
parse_terms([H | T], Acc) -> parse_terms(T, [H | Acc]).

is_spid(A) when is_atom(A) -> lists:prefix("$spid<", atom_to_list(A));
is_spid(_) -> false.

%% A pid of another node: '$rpid<node@host.Creation.Id.Serial>'.
is_rpid(A) when is_atom(A) -> lists:prefix("$rpid<", atom_to_list(A));
is_rpid(_) -> false.

%% The node of a remote pid.
rpid_node(A) ->
    {match, [Node]} = re:run(atom_to_list(A), "^\\$rpid<(.*)\\.[0-9]+\\.[0-9]+\\.[0-9]+>$",
                             [{capture, all_but_first, list}, unicode]),
    list_to_atom(Node).

%% Scenario port literals #Port<A.B> are read as the atoms '$sport<A.B>'.
is_sport(A) when is_atom(A) -> lists:prefix("$sport<", atom_to_list(A));
is_sport(_) -> false.

spids(T) -> lists:reverse(names_of(fun is_spid/1, T, [])).
sports(T) -> lists:reverse(names_of(fun is_sport/1, T, [])).

names_of(Is, T, Acc) when is_atom(T) ->
    case Is(T) andalso not lists:member(T, Acc) of
        true -> [T | Acc];
        false -> Acc
    end;
names_of(Is, [H | T], Acc) -> names_of(Is, T, names_of(Is, H, Acc));
names_of(Is, T, Acc) when is_tuple(T) -> names_of(Is, tuple_to_list(T), Acc);
names_of(Is, M, Acc) when is_map(M) -> names_of(Is, maps:to_list(M), Acc);
names_of(_, _, Acc) -> Acc.

%%% Running a term ---------------------------------------------------------

run_term(Term, W0) ->
    put(current_term, Term),
    Tag = case Term of
              T when is_tuple(T), tuple_size(T) > 0 -> element(1, T);
              _ -> Term
          end,
    {Reply, W1} = try do_term(Term, W0)
                  catch throw:{scenario_error, Reason} -> {{error, Reason}, W0}
                  end,
    W2 = settle(W1),
    print({reply, Tag, mask_reply(Tag, Reply)}, W2),
    delivered(),
    get(system_monitor) =:= true andalso timer:sleep(?SYSMON_MS),
    drain_all(W2),
    W2.

%% Waits until every puppet has handled its signals (it is waiting, or it
%% has exited: linked exits take puppets with them); exited ones leave the
%% world.
settle(W) ->
    settle(W, erlang:monotonic_time(millisecond) + ?WAIT_MS).

settle(W, Deadline) ->
    Puppets = maps:keys(W#w.stacks),
    States = [{P, erlang:process_info(maps:get(P, W#w.pids), [status])}
              || P <- Puppets],
    Busy = [P || {P, I} <- States, I =/= undefined, I =/= [{status, waiting}]],
    case Busy of
        [] ->
            Dead = [P || {P, undefined} <- States],
            W1 = lists:foldl(fun(P, Acc) -> gone(P, Acc) end, W, Dead),
            %% Then the peer nodes' processes: what they do in answer
            %% (dying of an exit signal) may wake this node's again.
            case settle_remote(W1) of
                {same, W2} -> W2;
                {changed, W2} -> settle(W2, Deadline)
            end;
        _ ->
            erlang:monotonic_time(millisecond) > Deadline
                andalso error({unsettled, Busy}),
            receive after 1 -> ok end,
            settle(W, Deadline)
    end.

%% Every remote puppet waits again, or has exited (its link exit signals
%% went out before its monitor's 'DOWN', so they have arrived).
settle_remote(W) ->
    lists:foldl(
      fun(S, {Changed, Acc}) ->
              Pid = maps:get(S, Acc#w.pids),
              case wait_remote(Pid) of
                  ok -> {Changed, Acc};
                  gone ->
                      Mon = maps:get(S, Acc#w.mons),
                      receive {'DOWN', Mon, process, Pid, _} -> ok
                      after ?WAIT_MS -> error({no_exit, S})
                      end,
                      Acc1 = Acc#w{remotes = Acc#w.remotes -- [S]},
                      {changed, unlink_all(S, Acc1)}
              end
      end, {same, W}, W#w.remotes).

gone(P, W) ->
    await_gone(maps:get(P, W#w.pids), P),
    unlink_all(P, W#w{stacks = maps:remove(P, W#w.stacks)}).

%% Waits until puppet Pid (scenario pid S) is gone: it has done exiting
%% (sent its exit signals) and left the process table. Polled, with
%% process_info/2's status, which the VM answers without the process: a
%% monitor would be a signal the puppet handles, scheduled in for it, which
%% running tracing would show (msc's world has no such run).
await_gone(Pid, S) ->
    await_gone(Pid, S, erlang:monotonic_time(millisecond) + ?WAIT_MS).

await_gone(Pid, S, Deadline) ->
    case erlang:process_info(Pid, [status]) of
        undefined -> ok;
        _ ->
            erlang:monotonic_time(millisecond) > Deadline
                andalso error({no_exit, S}),
            receive after 1 -> ok end,
            await_gone(Pid, S, Deadline)
    end.

%% Waits until the trace cleaner has cleaned a destroyed session from every
%% process: it is waiting with nothing to do, and so is every other process
%% (a process with a signal to handle is runnable). Polled with status,
%% which the VM answers without the process.
await_cleaner() ->
    Cleaner = case get(trace_cleaner) of
                  undefined ->
                      [C] = [P || P <- processes(),
                                  erlang:process_info(P, initial_call)
                                      =:= {initial_call, {erts_trace_cleaner, start, 0}}],
                      put(trace_cleaner, C),
                      C;
                  C -> C
              end,
    await_cleaner(Cleaner, erlang:monotonic_time(millisecond) + ?WAIT_MS).

await_cleaner(Cleaner, Deadline) ->
    receive after 1 -> ok end,
    Idle = erlang:process_info(Cleaner, [status, message_queue_len])
        =:= [{status, waiting}, {message_queue_len, 0}]
        andalso lists:all(fun(P) ->
                                  P =:= self() orelse
                                      lists:member(erlang:process_info(P, status),
                                                   [{status, waiting}, undefined])
                          end, processes()),
    case Idle of
        true -> ok;
        false ->
            erlang:monotonic_time(millisecond) > Deadline
                andalso error(trace_cleaner_busy),
            await_cleaner(Cleaner, Deadline)
    end.

delivered() ->
    Ref = erlang:trace_delivered(all),
    receive {trace_delivered, all, Ref} -> ok
    after ?WAIT_MS -> error(trace_delivered_timeout)
    end.

%%% Commands ---------------------------------------------------------------

do_term({session_create, Name, Tracer, Opts} = T, W0) ->
    W = prepare(T, W0),
    case call(fun() -> trace:session_create(Name, real(Tracer, W),
                                            real(Opts, W)) end) of
        {ok, Handle} ->
            {Name, W#w{sessions = (W#w.sessions)#{Name => Handle},
                       tracers = (W#w.tracers)#{Name => real(Tracer, W)}}};
        Error ->
            {Error, W}
    end;
do_term({session_destroy, Name}, W) ->
    Reply = result(fun() -> trace:session_destroy(session(Name, W)) end, W),
    %% A destroyed session is cleaned from every process by the trace
    %% cleaner, a system process that sends each a signal: each is
    %% scheduled in and out for it (running tracing shows it). Its work is
    %% waited for here, so that it shows with this term.
    Reply =:= true andalso await_cleaner(),
    {Reply, W};
do_term({session_info, What} = T, W0) ->
    W = prepare(T, W0),
    R = call(fun() -> trace:session_info(real(What, W)) end),
    {case R of
         %% (The driver's private session is not part of the world.)
         {ok, L} when is_list(L) -> [weak_name(S) || S <- L,
                                                  weak_name(S) =/= '$scenario_watch'];
         {ok, Other} -> pretty(Other, W);
         Error -> Error
     end, W};
do_term({process, S, Spec, How, Flags} = T, W0) ->
    W = prepare(T, W0),
    Session = session(S, W),
    New = new_tracer(real(Flags, W), maps:get(S, W#w.tracers, undefined)),
    Kept = kept(fun(P) -> trace:info(Session, P, tracer) end, How, New),
    {count(Spec, procs, Kept,
           fun() -> trace:process(Session, real(Spec, W), real(How, W),
                                  real(Flags, W)) end, W), W};
do_term({port, S, Spec, How, Flags} = T, W0) ->
    W = prepare(T, W0),
    Session = session(S, W),
    New = new_tracer(real(Flags, W), maps:get(S, W#w.tracers, undefined)),
    Kept = kept(fun(P) -> trace:info(Session, P, tracer) end, How, New),
    {count(Spec, case port_visits(Flags) of true -> ports; false -> none end, Kept,
           fun() -> trace:port(session(S, W), real(Spec, W), real(How, W),
                               real(Flags, W)) end, W), W};
do_term({function, S, MFA, Pattern, Flags} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> trace:function(session(S, W), real(MFA, W),
                                    real(Pattern, W), real(Flags, W)) end, W),
     W};
do_term({send, S, Pattern, Flags} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> trace:send(session(S, W), real(Pattern, W),
                                real(Flags, W)) end, W), W};
do_term({recv, S, Pattern, Flags} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> trace:recv(session(S, W), real(Pattern, W),
                                real(Flags, W)) end, W), W};
do_term({info, S, What, Item} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> trace:info(session(S, W), real(What, W),
                                real(Item, W)) end, W), W};
do_term({erlang_trace, Spec, How, Flags} = T, W0) ->
    W = prepare(T, W0),
    What = case {procs_or_ports(Flags), port_visits(Flags)} of
               {procs, true} -> procs_and_ports;
               {What0, _} -> What0
           end,
    New = new_tracer(real(Flags, W), self()),
    Kept = kept(fun(P) -> erlang:trace_info(P, tracer) end, How, New),
    {count(Spec, What, Kept,
           fun() -> erlang:trace(real(Spec, W), real(How, W),
                                 real(Flags, W)) end, W), W};
do_term({erlang_trace_pattern, MFA, Pattern, Flags} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> erlang:trace_pattern(real(MFA, W), real(Pattern, W),
                                          real(Flags, W)) end, W), W};
do_term({system, S, Event, Value} = T, W0) ->
    %% trace:system/3 (OTP 28): undef in OTP 27. Its monitor messages
    %% come from a system thread of their own, which trace_delivered does
    %% not wait for: each term then waits a little before the drain.
    W = prepare(T, W0),
    Reply = result(fun() -> trace:system(session(S, W), real(Event, W),
                                         real(Value, W)) end, W),
    Reply =:= ok andalso put(system_monitor, true),
    {Reply, W};
do_term({system_tracer, Tracer} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> seq_trace:set_system_tracer(real(Tracer, W)) end, W), W};
do_term({reset_seq_trace}, W) ->
    {result(fun() -> seq_trace:reset_trace() end, W), W};
do_term({seq_token, P}, W) ->
    Pid = puppet(P, W),
    {sequential_trace_token, Token} =
        erlang:process_info(Pid, sequential_trace_token),
    {pretty(Token, W), W};
do_term({erlang_trace_info, What, Item} = T, W0) ->
    W = prepare(T, W0),
    {result(fun() -> erlang:trace_info(real(What, W), real(Item, W)) end, W),
     W};

%%% Host events ------------------------------------------------------------

do_term({module, M, Fs}, W) ->
    declare_module(M, Fs, W);
do_term({spawn, Parent, Child}, W) ->
    spawn_event(Parent, Child, W);
do_term({node, Name}, W) ->
    start_node(Name),
    {ok, W};
do_term({peer, Name}, W) ->
    start_peer(Name),
    {ok, W};
do_term({Kind, P, Call}, W)
  when Kind =:= call; Kind =:= try_call; Kind =:= local_call;
       Kind =:= tail_call; Kind =:= local_tail_call ->
    call_event(Kind, P, Call, W);
do_term({return, P, Value}, W) ->
    return_event(P, Value, W);
do_term({raise, P, Class, Reason}, W) ->
    raise_event(P, Class, Reason, W);
do_term({do, P, Actions}, W) ->
    do_event(P, Actions, W);
do_term({allocate, P, Words}, W) ->
    allocate_event(P, Words, W);
do_term({code_delete, M}, W) ->
    {code:delete(tracer_module(M)), W};
do_term({code_purge, M}, W) ->
    {code:purge(tracer_module(M)), W};
do_term({code_load, M}, W) ->
    {code:load_file(tracer_module(M)), W};
do_term({advance_clock, Ns}, W) ->
    %% msc's injected clock moves on; OTP's clock is its own.
    is_integer(Ns) orelse world_error(not_an_integer),
    {ok, W};
do_term(_, _W) ->
    world_error(unknown_term).

%% {node, Name}: distribution starts (long names: Name is name@127.0.0.1,
%% which needs no host lookup in the chroot).
start_node(Name) ->
    node_name(Name),
    node() =:= nonode@nohost orelse world_error(already_alive),
    _ = os:cmd("epmd -daemon"),
    {ok, _} = net_kernel:start(Name, #{name_domain => longnames}),
    ok.

%% {peer, Name}: a peer node starts, with the scenario's idle loop and
%% actions loaded and no log output.
start_peer(Name) ->
    node_name(Name),
    is_alive() orelse world_error(not_alive),
    (Name =/= node() andalso not lists:member(Name, nodes()))
        orelse world_error(already_exists),
    [N, H] = string:split(atom_to_list(Name), "@"),
    {ok, _Peer, Name} = peer:start_link(#{name => list_to_atom(N), host => H,
                                          longnames => true,
                                          connection => standard_io}),
    ok = erpc:call(Name, logger, set_primary_config, [level, none]),
    [{module, M} = erpc:call(Name, code, load_binary, [M, File, Bin])
     || {M, File, Bin} <- peer_code()],
    ok.

node_name(Name) ->
    (is_atom(Name) andalso lists:member($@, atom_to_list(Name)))
        orelse world_error(bad_node_name).

%% The code events take only the tracer module (the world's modules are
%% its own).
tracer_module(tracer_test) -> tracer_test;
tracer_module(_) -> world_error(not_a_tracer_module).

%% Runs a trace BIF; errors become {error, Reason} like the format says.
call(Fun) ->
    try {ok, Fun()}
    catch
        error:{badarg, _} -> {error, badarg};
        _:Reason -> {error, Reason}
    end.

result(Fun, W) ->
    case call(Fun) of
        {ok, R} -> pretty(R, W);
        Error -> Error
    end.

session(Name, W) ->
    maps:get(Name, W#w.sessions, Name).

weak_name({Name, _WeakId}) when is_atom(Name) -> Name;
weak_name(Other) -> Other.

procs_or_ports(Flags) ->
    Ports = [ports, 'receive', send, running_ports],
    case proper_list(Flags) andalso Flags =/= [] andalso
        lists:all(fun(F) -> lists:member(F, Ports) end, Flags) andalso
        lists:member(ports, Flags) of
        true -> ports;
        false -> procs
    end.

%% The count a VM holding only the scenario's processes would return: the real
%% count minus every live process outside the scenario world (the group
%% leader too: it is in the world only to print it) that the command counted
%% (not Kept(P)) and every port outside it, of the kinds ERTS visited (What:
%% procs, ports, both or none). 'new' specs and single pids are returned as
%% they are.
count(Spec, What, Kept, Fun, W) ->
    case call(Fun) of
        {ok, N} when is_integer(N) ->
            Procs = [all, existing, processes, existing_processes],
            Ports = [all, existing, ports, existing_ports],
            OutsideProcs = length([P || P <- processes(),
                                        not maps:is_key(P, W#w.rev)
                                            orelse P =:= group_leader(),
                                        not Kept(P)]),
            OutsidePorts = length([P || P <- erlang:ports(),
                                        not maps:is_key(P, W#w.rev),
                                        not Kept(P)]),
            SubProcs = lists:member(What, [procs, procs_and_ports])
                andalso lists:member(Spec, Procs),
            SubPorts = lists:member(What, [ports, procs_and_ports])
                andalso lists:member(Spec, Ports),
            N - case SubProcs of true -> OutsideProcs; false -> 0 end
              - case SubPorts of true -> OutsidePorts; false -> 0 end;
        {ok, Other} -> pretty(Other, W);
        Error -> Error
    end.

%% The tracer that turning flags on sets: {tracer, T} in the flags, else
%% Default (the session's, or the caller for erlang:trace/3), as trace
%% info shows it.
new_tracer(Flags, Default) ->
    Items = case proper_list(Flags) of
                true -> Flags;
                false -> []
            end,
    case [T || {tracer, _} = T <- Items] ++ [T || {tracer, _, _} = T <- Items] of
        [{tracer, T} | _] -> T;
        [{tracer, erl_tracer, T} | _] -> T;
        [{tracer, M, S} | _] -> {M, S};
        [] -> Default
    end.

%% Is P (a process or port) left as it is by a command turning flags on
%% (How) with tracer New?
%% ERTS's start_trace leaves, and does not count, a process traced in the
%% session by another tracer that is still enabled. Asked after the command:
%% a process it changed has New by then. Info(P) is the tracer info of P in
%% the command's session.
kept(Info, How, New) ->
    fun(P) ->
            How =:= true andalso
                case catch Info(P) of
                    {tracer, Old} when Old =/= [], Old =/= New -> enabled_tracer(Old, P);
                    _ -> false
                end
    end.

enabled_tracer(Pid, _) when is_pid(Pid) -> is_process_alive(Pid);
enabled_tracer({M, S}, P) ->
    erlang:module_loaded(M) andalso (catch M:enabled(trace_status, S, P)) =/= remove;
enabled_tracer(_, _) -> false.

%% ERTS visits the existing ports only for a port flag or a modifier.
port_visits(Flags) ->
    PortFlags = [all, ports, running_ports, send, 'receive', silent, timestamp,
                 monotonic_timestamp, strict_monotonic_timestamp, scheduler_id],
    proper_list(Flags) andalso
        lists:any(fun(F) -> lists:member(F, PortFlags) end, Flags).

%% Every pid the scenario names stands for a dead process until it is
%% spawned or named in a tracer position of a command; these placeholders are
%% made before the first term runs, so they never see any trace flags.
placeholders(W0, Terms) ->
    W1 = lists:foldl(fun(S, W) -> bind(S, dead_pid(), dead, W) end,
                     W0, [S || S <- spids(Terms), S =/= ?DRIVER]),
    lists:foldl(fun(S, W) -> bind(S, dead_port(), dead, W) end,
                W1, sports(Terms)).

%% Makes the pids a command names in tracer positions exist as collectors.
prepare(Term, W0) ->
    lists:foldl(
      fun(S, W) ->
              case maps:get(S, W#w.kind, none) of
                  dead ->
                      W1 = bind(S, spawn_link(fun collector/0), collector, W),
                      W1#w{order = W1#w.order ++ [S]};
                  _ -> W
              end
      end, W0, tracer_spids(Term)).

tracer_spids({system_tracer, T}) ->
    Module = case T of
                 {Mod, State} when is_atom(Mod) -> state_collector(State);
                 _ -> []
             end,
    [T || is_spid(T)] ++ Module;
tracer_spids({session_create, _, T, Opts}) ->
    Module = case T of
                 {Mod, State} when is_atom(Mod) -> state_collector(State);
                 _ -> []
             end,
    [T || is_spid(T)] ++ Module ++ tracer_spids(Opts);
tracer_spids({Key, P}) when Key =:= tracer; Key =:= meta ->
    [P || is_spid(P)] ++ tracer_spids(P);
tracer_spids({Key, _Mod, P}) when Key =:= tracer; Key =:= meta ->
    [P || is_spid(P)] ++ state_collector(P) ++ tracer_spids(P);
tracer_spids(T) when is_tuple(T) -> tracer_spids(tuple_to_list(T));
tracer_spids([H | T]) -> tracer_spids(H) ++ tracer_spids(T);
tracer_spids(_) -> [].

%% The collector of a tracer module's state {Decisions, Collector, Extra}.
state_collector(State) when is_tuple(State), tuple_size(State) >= 2 ->
    C = element(2, State),
    [C || is_spid(C)];
state_collector(_) -> [].

bind(S, Pid, Kind, W) ->
    W#w{pids = (W#w.pids)#{S => Pid}, rev = (W#w.rev)#{Pid => S},
        kind = (W#w.kind)#{S => Kind}}.

dead_pid() ->
    {Pid, Ref} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', Ref, process, Pid, _} -> Pid end.

%% A port that has closed: what a port literal stands for until a puppet
%% opens it.
dead_port() ->
    Port = open_port({spawn, "cat"}, [binary]),
    true = port_close(Port),
    Port.

collector() -> collector([]).
collector(Acc) ->
    receive
        {'$drain', From, Ref} ->
            From ! {Ref, lists:reverse(Acc)},
            collector([]);
        Msg ->
            collector([Msg | Acc])
    end.

%% Scenario terms -> real terms (pids).
real(A, W) when is_atom(A) ->
    case is_spid(A) orelse is_sport(A) of
        true -> maps:get(A, W#w.pids);
        %% A remote child not spawned yet stays a name, which the
        %% spawning puppet reads its node from.
        false -> maps:get(A, W#w.pids, A)
    end;
real([H | T], W) -> [real(H, W) | real(T, W)];
real(T, W) when is_tuple(T) -> list_to_tuple(real(tuple_to_list(T), W));
real(M, W) when is_map(M) ->
    maps:from_list([{real(K, W), real(V, W)} || {K, V} <- maps:to_list(M)]);
real(X, _) -> X.

%% Real terms -> scenario terms.
pretty(P, W) when is_pid(P) -> maps:get(P, W#w.rev, '$unknown_pid');
pretty(P, W) when is_port(P) -> maps:get(P, W#w.rev, '$unknown_port');
pretty(R, _W) when is_reference(R) -> '$ref';
pretty([H | T], W) -> [pretty(H, W) | pretty(T, W)];
pretty(T, W) when is_tuple(T) -> list_to_tuple(pretty(tuple_to_list(T), W));
pretty(M, W) when is_map(M) ->
    maps:from_list([{pretty(K, W), pretty(V, W)} || {K, V} <- maps:to_list(M)]);
pretty(X, _) -> X.

%%% Output -----------------------------------------------------------------

print(Term, _W) ->
    Text = io_lib:format("~tkw.~n", [Term]),
    Out0 = re:replace(Text, "'\\$spid(<[0-9.]+>)'", "\\1",
                      [global, unicode, {return, binary}]),
    Out1 = re:replace(Out0, "'\\$sport(<[0-9.]+>)'", "#Port\\1",
                      [global, unicode, {return, binary}]),
    Out = remote_pids(Out1),
    put(output, [Out | case get(output) of undefined -> []; O -> O end]).

%% '$rpid<node@host.C.I.S>' -> #Pid<'node@host'.C.I.S> (the node written
%% as an atom, quoted only if it must be, as msc writes it).
remote_pids(Text) ->
    case re:run(Text, "'\\$rpid<(.*?)\\.([0-9]+\\.[0-9]+\\.[0-9]+)>'",
                [{capture, all, binary}, unicode]) of
        {match, [Whole, Node, Numbers]} ->
            [Before, After] = binary:split(Text, Whole),
            Atom = unicode:characters_to_binary(
                     io_lib:write_atom(binary_to_atom(Node, utf8))),
            <<Before/binary, "#Pid<", Atom/binary, ".", Numbers/binary, ">",
              (remote_pids(After))/binary>>;
        nomatch -> Text
    end.

drain_all(W) ->
    lists:foreach(fun(S) -> drain(S, W) end, W#w.order).

drain(S, W) ->
    case maps:get(S, W#w.kind, none) of
        collector ->
            Pid = maps:get(S, W#w.pids),
            Ref = make_ref(),
            Pid ! {'$drain', self(), Ref},
            receive {Ref, Msgs} -> print_msgs(S, Msgs, W)
            after ?WAIT_MS -> error({collector_timeout, S})
            end;
        driver ->
            print_msgs(S, own_trace_msgs(), W);
        _ ->
            ok
    end.

own_trace_msgs() ->
    receive
        M when is_tuple(M), tuple_size(M) >= 3,
               (element(1, M) =:= trace orelse element(1, M) =:= trace_ts
                orelse element(1, M) =:= seq_trace) ->
            [M | own_trace_msgs()]
    after 0 -> []
    end.

print_msgs(S, Msgs, W) ->
    [print({S, pretty(mask(M), W)}, W) || M <- Msgs, in_world(M, W)],
    ok.

%% A trace message about a process outside the scenario world (a VM process
%% traced through `existing` or `all`), or about the driver's traffic with
%% the collectors, is not part of the world.
in_world(M, W) when is_tuple(M), tuple_size(M) >= 3,
                    (element(1, M) =:= trace orelse element(1, M) =:= trace_ts) ->
    Tracee = element(2, M),
    Machinery = case M of
                    {_, _, send, {'$drain', _, _}, _} -> true;
                    {_, _, send, {'$drain', _, _}, _, _} -> true;
                    _ -> false
                end,
    not Machinery andalso
        (not (is_pid(Tracee) orelse is_port(Tracee))
         orelse maps:is_key(Tracee, W#w.rev));
%% A system monitor message about the driver, a collector or a VM process
%% is about the scenario's machinery, whose queues and heaps are not the
%% world's.
in_world({monitor, Who, Event, _Info}, W) when is_atom(Event) ->
    case maps:find(Who, W#w.rev) of
        {ok, S} -> maps:get(S, W#w.kind, none) =:= puppet;
        error -> false
    end;
%% What tracer_test forwards: {Tag, State, Tracee, Msg, Opts}.
in_world({Tag, _State, Tracee, _Msg, Opts}, W) when is_atom(Tag), is_map(Opts),
                                                    (is_pid(Tracee) orelse is_port(Tracee)) ->
    maps:is_key(Tracee, W#w.rev);
in_world(_, _) -> true.

%% The measured values of call_time and call_memory in trace_info replies
%% ({Pid, Count, Sec, USec}, {Pid, Count, Words}) are not reproducible, and
%% the order of the processes depends on the real pids: values are masked
%% and processes sorted by scenario pid, as msc --mask-timestamps does.
mask_reply(Tag, Reply) when Tag =:= info; Tag =:= erlang_trace_info ->
    mask_counters(Reply);
mask_reply(_, Reply) -> Reply.

mask_counters({all, L}) when is_list(L) ->
    {all, [mask_counters(I) || I <- L]};
mask_counters({call_time, L}) when is_list(L) ->
    {call_time, sort_by_pid([{P, C, '$ts', '$ts'} || {P, C, _, _} <- L])};
mask_counters({call_memory, L}) when is_list(L) ->
    {call_memory, sort_by_pid([{P, C, '$words'} || {P, C, _} <- L])};
mask_counters(Reply) -> Reply.

sort_by_pid(L) ->
    lists:sort(fun(A, B) -> spid_key(element(1, A)) =< spid_key(element(1, B)) end, L).

spid_key(A) when is_atom(A) ->
    case re:run(atom_to_list(A), "^\\$spid<([0-9]+)\\.([0-9]+)\\.([0-9]+)>$",
                [{capture, all_but_first, list}]) of
        {match, Parts} -> {0, [list_to_integer(X) || X <- Parts]};
        nomatch -> {1, A}
    end;
spid_key(X) -> {1, X}.

mask(M) when is_tuple(M), tuple_size(M) >= 4,
              (element(1, M) =:= trace orelse element(1, M) =:= trace_ts),
              is_atom(element(3, M)), is_list(element(4, M)) ->
    case atom_to_list(element(3, M)) of
        "gc_" ++ _ ->
            Figures = [{K, '$n'} || {K, _} <- element(4, M)],
            mask_ts(setelement(4, M, Figures));
        _ -> mask_ts(M)
    end;
mask({Tag, State, Tracee, Info, Opts} = M) when is_atom(Tag), is_list(Info) ->
    case atom_to_list(Tag) of
        "gc_" ++ _ -> {Tag, State, Tracee, [{K, '$n'} || {K, _} <- Info], Opts};
        _ -> mask_ts(M)
    end;
%% A system monitor's heap figures (large_heap, long_gc, long_schedule).
mask({monitor, Who, Event, Info}) when is_list(Info) ->
    {monitor, Who, Event, [{K, '$n'} || {K, _} <- Info]};
mask(M) -> mask_ts(M).

mask_ts(M) when is_tuple(M), element(1, M) =:= trace_ts ->
    setelement(tuple_size(M), M, '$ts');
mask_ts(M) when is_tuple(M), element(1, M) =:= seq_trace, tuple_size(M) =:= 4 ->
    setelement(4, M, '$ts');
mask_ts(M) -> M.

%%% Modules ----------------------------------------------------------------

declare_module(M, Fs0, W) ->
    (is_atom(M) andalso is_list(Fs0)) orelse world_error(bad_module),
    Fs = [case F of
              {Name, A} when is_atom(Name), is_integer(A), A >= 0 ->
                  {Name, A, exported};
              {Name, A, local} when is_atom(Name), is_integer(A), A >= 0 ->
                  {Name, A, local};
              _ -> world_error(bad_module)
          end || F <- Fs0],
    Keys = [{F, A} || {F, A, _} <- Fs],
    ok = case is_atom(M) andalso M =/= scenario andalso is_list(Fs0)
             andalso length(lists:usort(Keys)) =:= length(Keys)
             andalso not lists:member({module_info, 0}, Keys)
             andalso not lists:member({module_info, 1}, Keys) of
             true -> ok;
             false -> world_error(bad_module)
         end,
    Src = module_source(M, Fs),
    {ok, M, Bin} = compile_cached(Src),
    case code:is_loaded(M) of
        {file, _} ->
            %% Redeclaration: the new code replaces the old one.
            _ = code:purge(M);
        false -> ok
    end,
    {module, M} = code:load_binary(M, "scenario_" ++ atom_to_list(M) ++ ".erl",
                                   Bin),
    {ok, W#w{modules = (W#w.modules)#{M => Fs}}}.

%% Compiling a scenario module takes seconds (its 16 receive slots per
%% function); with SCENARIO_CACHE set to a directory, the binary of each
%% source is kept there, named by the source's MD5, for the next run.
compile_cached(Src) ->
    case os:getenv("SCENARIO_CACHE") of
        false -> compile_source(Src);
        Dir ->
            Key = binary:encode_hex(erlang:md5(Src), lowercase),
            File = filename:join(Dir, <<Key/binary, ".beam">>),
            case file:read_file(File) of
                {ok, Bin} ->
                    {ok, {Mod, _}} = beam_lib:chunks(Bin, []),
                    {ok, Mod, Bin};
                {error, _} ->
                    {ok, Mod, Bin} = compile_source(Src),
                    ok = filelib:ensure_dir(File),
                    ok = write_whole(File, Bin),
                    {ok, Mod, Bin}
            end
    end.

%% Writes under a temporary name, then renames, so that runs in parallel
%% never read half a file.
write_whole(File, Bin) ->
    Tmp = iolist_to_binary([File, ".", os:getpid()]),
    ok = file:write_file(Tmp, Bin),
    file:rename(Tmp, File).

%% The directory of this script (of its module, when generate.sh runs it
%% compiled).
script_dir() ->
    try filename:dirname(filename:absname(escript:script_name()))
    catch _:_ -> filename:dirname(code:which(?MODULE))
    end.

compile_source(Src) ->
    {ok, Toks, _} = erl_scan:string(Src),
    Forms = split_forms(Toks, []),
    case compile:forms(Forms, [binary, return_errors]) of
        {ok, Mod, Bin} -> {ok, Mod, Bin};
        {ok, Mod, Bin, _Warnings} -> {ok, Mod, Bin};
        Error -> error({compile_failed, Error, Src})
    end.

split_forms([], []) -> [];
split_forms([{dot, _} = Dot | T], Acc) ->
    {ok, Form} = erl_parse:parse_form(lists:reverse([Dot | Acc])),
    [Form | split_forms(T, [])];
split_forms([H | T], Acc) -> split_forms(T, [H | Acc]).

load_idle_module() ->
    Src =
        "-module(scenario).\n"
        "-export([idle/0]).\n"
        "idle() ->\n"
        "    receive\n"
        "        {'$scenario_step', {call, M, F, As}} ->\n"
        "            _ = apply(M, F, As), idle();\n"
        "        {'$scenario_step', {try_call, M, F, As}} ->\n"
        "            _ = try apply(M, F, As) catch _:_ -> caught end, idle();\n"
        "        {'$scenario_step', spawn} ->\n"
        "            _ = erlang:spawn(scenario, idle, []), idle();\n"
        "        {'$scenario_step', {do, As}} ->\n"
        "            _ = scenario_act:run(As), idle();\n"
        "        {'$scenario_step', {allocate, N}} ->\n"
        "            _ = case N of 0 -> ok; _ -> erlang:make_tuple(N - 1, []) end,\n"
        "            idle();\n"
        "        {'$scenario_step', {return, V}} ->\n"
        "            V;\n"
        "        {'$scenario_step', {raise, C, R}} ->\n"
        "            erlang:raise(C, R, []);\n"
        "        {'$scenario_step', {tail_call, M, F, As}} ->\n"
        "            apply(M, F, As)\n"
        "    end.\n",
    {ok, scenario, Bin} = compile_source(Src),
    {module, scenario} = code:load_binary(scenario, "scenario.erl", Bin),
    put(peer_code, [{scenario, "scenario.erl", Bin} | peer_code()]),
    ok.

%% The modules a peer node loads too.
peer_code() ->
    case get(peer_code) of
        undefined -> [];
        Code -> Code
    end.

%% Module scenario_act runs the actions of a {do, P, Actions} step in the
%% puppet (see docs/scenarios.md). It is not part of the scenario world:
%% scenarios do not trace it.
load_act_module() ->
    Src =
        "-module(scenario_act).\n"
        "-export([run/1]).\n"
        "run([]) -> ok;\n"
        "run([A | As]) -> _ = act(A), run(As).\n"
        "act({send, To, M}) -> catch erlang:send(who(To), M);\n"
        "act('receive') -> receive M -> M end;\n"
        "act(receive_timeout) -> receive M -> error({unexpected, M}) after 1 -> timeout end;\n"
        "act({link, P}) -> link(who(port(P)));\n"
        "act({unlink, P}) -> unlink(who(port(P)));\n"
        "act({register, N}) -> register(N, self());\n"
        "act({register, N, P}) -> register(N, port(P));\n"
        "act({open_port, P, Prog}) ->\n"
        "    Port = open_port({spawn, atom_to_list(Prog)}, [binary]),\n"
        "    put({owned, Port}, true),\n"
        "    put({port, P}, Port);\n"
        "%% Only the owner (the puppet that opened it) gets the echo.\n"
        "act({port_command, P0, Data}) ->\n"
        "    P = port(P0), port_command(P, Data),\n"
        "    case get({owned, P}) of\n"
        "        true -> receive {P, {data, _}} = M -> M end;\n"
        "        undefined -> true\n"
        "    end;\n"
        "act({port_control, P, Op, Data}) -> catch port_control(port(P), Op, Data);\n"
        "act({port_call, P, Op, T}) -> catch erlang:port_call(port(P), Op, T);\n"
        "act({port_close, P}) -> port_close(port(P));\n"
        "act({spawn, C}) when is_atom(C) -> erlang:spawn(rnode(C), scenario, idle, []);\n"
        "act({spawn, C}) -> put({child, C}, erlang:spawn(scenario, idle, []));\n"
        "act({spawn_link, C}) when is_atom(C) -> erlang:spawn_link(rnode(C), scenario, idle, []);\n"
        "act({spawn_link, C}) -> put({child, C}, erlang:spawn_link(scenario, idle, []));\n"
        "act({unregister, N}) -> unregister(N);\n"
        "act({trap_exit, B}) -> process_flag(trap_exit, B);\n"
        "act(garbage_collect) -> erlang:garbage_collect();\n"
        "act({exit, R}) -> exit(R);\n"
        "act({exit, P, R}) -> exit(P, R);\n"
        "act({seq_trace, K, V}) -> seq_trace:set_token(K, V);\n"
        "act({seq_trace_token, T}) -> seq_trace:set_token(T);\n"
        "act({seq_trace_print, M}) -> seq_trace:print(M);\n"
        "act({seq_trace_print, L, M}) -> seq_trace:print(L, M).\n"
        "%% A port this puppet opened in the step that names it (the\n"
        "%% driver only learns it after the step).\n"
        "port(P) -> case get({port, P}) of undefined -> P; Real -> Real end.\n"
        "%% A child this puppet spawned in the step that names it (the driver\n"
        "%% passed the placeholder it stands for until then).\n"
        "who(P) -> case get({child, P}) of undefined -> P; Real -> Real end.\n"
        "%% The node of a remote child's name '$rpid<Node.C.I.S>'.\n"
        "rnode(A) ->\n"
        "    \"$rpid<\" ++ R = atom_to_list(A),\n"
        "    Parts = string:split(lists:droplast(R), \".\", all),\n"
        "    Node = lists:join(\".\", lists:sublist(Parts, length(Parts) - 3)),\n"
        "    list_to_atom(lists:flatten(Node)).\n",
    {ok, scenario_act, Bin} = compile_source(Src),
    {module, scenario_act} = code:load_binary(scenario_act, "scenario_act.erl", Bin),
    put(peer_code, [{scenario_act, "scenario_act.erl", Bin} | peer_code()]),
    ok.

names_atom(A, A) -> true;
names_atom(A, [H | T]) -> names_atom(A, H) orelse names_atom(A, T);
names_atom(A, T) when is_tuple(T) -> names_atom(A, tuple_to_list(T));
names_atom(A, M) when is_map(M) -> names_atom(A, maps:to_list(M));
names_atom(_, _) -> false.

%% Module tracer_test: the erl_tracer callbacks enabled/3 and trace/5 are the
%% NIFs of tracer_test.so (see tracer_test.c), loaded by its on_load function.
load_tracer_test() ->
    So = filename:join(script_dir(), "tracer_test"),
    Src = io_lib:format(
            "-module(tracer_test).\n"
            "-export([enabled/3, trace/5]).\n"
            "-nifs([enabled/3, trace/5]).\n"
            "-on_load(init/0).\n"
            "init() -> erlang:load_nif(~w, 0).\n"
            "enabled(_, _, _) -> erlang:nif_error(nif_not_loaded).\n"
            "trace(_, _, _, _, _) -> erlang:nif_error(nif_not_loaded).\n",
            [So]),
    {ok, tracer_test, Bin} = compile_source(lists:flatten(Src)),
    %% On the code path, so that code:load_file/1 and loading on demand
    %% (erlang:trace/3 calling tracer_test:enabled/3) find it.
    Dir = filename:dirname(So),
    ok = write_whole(filename:join(Dir, "tracer_test.beam"), Bin),
    true = code:add_patha(Dir),
    {module, tracer_test} = code:load_file(tracer_test),
    ok.

%% The source of a declared module. Each function:
%%
%%     f(A1, ...) ->
%%         S0 = receive {'$scenario_step', X0} -> X0 end,
%%         S1 = case S0 of
%%                  {call, M, F, As} -> _ = apply(M, F, As), <receive>;
%%                  {try_call, M, F, As} -> _ = try ... catch ... end, <receive>;
%%                  {local_call, F, As} -> _ = case {F, As} of ... end, <receive>;
%%                  spawn -> _ = erlang:spawn(scenario, idle, []), <receive>;
%%                  Tail -> Tail
%%              end,
%%         ...
%%         case S16 of
%%             {return, V} -> V;
%%             {raise, C, R} -> erlang:raise(C, R, []);
%%             {tail_call, M, F, As} -> apply(M, F, As);
%%             {local_tail_call, F, As} -> case {F, As} of ... end
%%         end.
module_source(M, Fs) ->
    Exports = [io_lib:format("~tw/~w", [F, A]) || {F, A, exported} <- Fs],
    All = [io_lib:format("~tw/~w", [F, A]) || {F, A, _} <- Fs],
    lists:flatten(
      [io_lib:format("-module(~tw).~n", [M]),
       io_lib:format("-export([~ts]).~n", [lists:join(", ", Exports)]),
       %% Local calls to functions named like auto-imported BIFs
       %% (process_info/2, atom_to_list/1, ...) must call the module's own.
       io_lib:format("-compile({no_auto_import, [~ts]}).~n",
                     [lists:join(", ", All)]),
       [function_source(F, A, Fs) || {F, A, _} <- Fs]]).

function_source(F, Arity, Fs) ->
    Params = lists:join(", ", [io_lib:format("_P~w", [I])
                               || I <- lists:seq(1, Arity)]),
    Slot =
        fun(I) ->
                Template =
                    "    S@ = case S^ of\n"
                    "        {call, M@, F@, As@} ->\n"
                    "            _ = apply(M@, F@, As@), RECV;\n"
                    "        {try_call, M@, F@, As@} ->\n"
                    "            _ = try apply(M@, F@, As@) catch _:_ -> caught end, RECV;\n"
                    "        {local_call, F@, As@} ->\n"
                    "            _ = LOCAL, RECV;\n"
                    "        spawn ->\n"
                    "            _ = erlang:spawn(scenario, idle, []), RECV;\n"
                    "        {do, As@} ->\n"
                    "            _ = scenario_act:run(As@), RECV;\n"
                    "        {allocate, N@} ->\n"
                    "            _ = case N@ of 0 -> ok; _ -> erlang:make_tuple(N@ - 1, []) end, RECV;\n"
                    "        Tail@ -> Tail@\n"
                    "    end,\n",
                fill(Template, [{"LOCAL", local_case(I, Fs)},
                                {"RECV", recv(I)},
                                {"@", integer_to_list(I)},
                                {"^", integer_to_list(I - 1)}])
        end,
    N = ?SLOTS,
    [io_lib:format("~tw(~ts) ->~n", [F, Params]),
     io_lib:format("    S0 = ~ts,~n", [recv(0)]),
     [Slot(I) || I <- lists:seq(1, N)],
     io_lib:format("    case S~w of~n", [N]),
     "        {return, V} -> V;\n"
     "        {raise, C, R} -> erlang:raise(C, R, []);\n"
     "        {tail_call, TM, TF, TAs} -> apply(TM, TF, TAs);\n",
     io_lib:format("        {local_tail_call, TF, TAs} -> ~ts~n",
                   [local_case(tail, Fs)]),
     "    end.\n"].

recv(I) ->
    io_lib:format("receive {'~s', X~w} -> X~w end", [?STEP, I, I]).

fill(Text, []) -> Text;
fill(Text, [{Key, Value} | T]) ->
    fill(string:replace(lists:flatten(Text), Key, lists:flatten(Value), all), T).

%% case {F, As} of {f, [B1, B2]} -> f(B1, B2); ... end
local_case(I, Fs) ->
    {FV, AV, Pre} = case I of
                        tail -> {"TF", "TAs", "T"};
                        _ -> {io_lib:format("F~w", [I]),
                              io_lib:format("As~w", [I]),
                              io_lib:format("L~w_", [I])}
                    end,
    Clauses =
        [begin
             Vs = [io_lib:format("~sB~w", [Pre, J]) || J <- lists:seq(1, A)],
             VL = lists:join(", ", Vs),
             io_lib:format("{~tw, [~ts]} -> ~tw(~ts)", [F, VL, F, VL])
         end || {F, A, _} <- Fs],
    io_lib:format("case {~ts, ~ts} of ~ts end",
                  [FV, AV, lists:join("; ", Clauses)]).

%%% Processes and calls ------------------------------------------------------
%%
%% The model of a puppet's stack: frames innermost first, the idle loop
%% {scenario, idle, 0} at the bottom until it returns, raises or tail-calls
%% away. A frame is {M, F, Arity, Catches, NonTailSteps}; Catches says the
%% frame below called it inside try ... catch. When the last frame ends the
%% process exits.
%%
%% Host events that do not fit the world reply {error, Reason} with the
%% reasons msc uses: not_a_pid, noproc, already_exists, bad_call, undef,
%% not_local, bad_class, bad_module, not_an_integer, unknown_term. Two more
%% are this script's own: unsupported (calls or spawns by the driver or a
%% collector, and calls of module_info/0,1, which msc allows and this script
%% cannot make) and too_many_steps (more than ?SLOTS non-tail steps in one
%% activation).

-define(IDLE, {scenario, idle, 0, false, 0}).

world_error(Reason) -> throw({scenario_error, Reason}).

%% The live puppet P.
puppet(P, W) ->
    is_spid(P) orelse world_error(not_a_pid),
    case maps:get(P, W#w.kind, none) of
        puppet ->
            Pid = maps:get(P, W#w.pids),
            case maps:is_key(P, W#w.stacks) andalso is_process_alive(Pid) of
                true -> Pid;
                false -> world_error(noproc)
            end;
        driver -> world_error(unsupported);
        collector -> world_error(unsupported);
        _ -> world_error(noproc)
    end.

spawn_event(Parent, Child, W) ->
    case is_rpid(Child) of
        true -> spawn_remote_event(Parent, Child, W);
        false -> spawn_local_event(Parent, Child, W)
    end.

%% The driver spawns a process on a peer node (puppets use the action
%% {spawn, Child}).
spawn_remote_event(Parent, Child, W) ->
    is_spid(Parent) orelse world_error(not_a_pid),
    case maps:get(Parent, W#w.kind, none) of
        driver -> ok;
        puppet -> world_error(unsupported);
        collector -> world_error(unsupported);
        _ -> world_error(noproc)
    end,
    check_remote_child(Child, W),
    Pid = erlang:spawn(rpid_node(Child), scenario, idle, []),
    {ok, bind_remote(Child, Pid, W)}.

check_remote_child(Child, W) ->
    lists:member(rpid_node(Child), nodes()) orelse world_error(noconnection),
    maps:get(Child, W#w.kind, none) =:= none orelse world_error(already_exists),
    ok.

bind_remote(S, Pid, W) ->
    wait_remote(Pid),
    Mon = erlang:monitor(process, Pid),
    W1 = bind(S, Pid, remote, W),
    W1#w{mons = (W1#w.mons)#{S => Mon}, remotes = W1#w.remotes ++ [S]}.

%% Waits until remote process Pid waits in its receive again (or is gone).
%% The answer comes over the same connection as anything Pid sent this
%% node before it, so that has arrived too.
wait_remote(Pid) ->
    wait_remote(Pid, erlang:monotonic_time(millisecond) + ?WAIT_MS).

wait_remote(Pid, Deadline) ->
    case erpc:call(node(Pid), erlang, process_info, [Pid, [status]]) of
        [{status, waiting}] -> ok;
        undefined -> gone;
        Other ->
            erlang:monotonic_time(millisecond) > Deadline
                andalso error({stuck, Pid, Other}),
            receive after 1 -> ok end,
            wait_remote(Pid, Deadline)
    end.

%% The idle processes of peer node Node.
remote_idle(Node) ->
    [P || P <- erpc:call(Node, erlang, processes, []),
          erpc:call(Node, erlang, process_info, [P, initial_call])
              =:= {initial_call, {scenario, idle, 0}}].

spawn_local_event(Parent, Child, W) ->
    (is_spid(Parent) andalso is_spid(Child)) orelse world_error(not_a_pid),
    ParentKind = maps:get(Parent, W#w.kind, none),
    case ParentKind of
        driver -> ok;
        puppet -> ok;
        collector -> world_error(unsupported);
        _ -> world_error(noproc)
    end,
    maps:get(Child, W#w.kind, none) =:= dead orelse world_error(already_exists),
    Pid = case ParentKind of
              driver ->
                  erlang:spawn(scenario, idle, []);
              puppet ->
                  PPid = puppet(Parent, W),
                  Stack = maps:get(Parent, W#w.stacks),
                  check_slots(Stack),
                  Before = processes(),
                  PPid ! {?STEP, spawn},
                  wait_state(PPid, where(Stack)),
                  [C] = [C || C <- processes() -- Before,
                              erlang:process_info(C, initial_call)
                                  =:= {initial_call, {scenario, idle, 0}}],
                  C
          end,
    wait_state(Pid, {scenario, idle, 0}),
    W1 = bind(Child, Pid, puppet, W),
    W2 = case ParentKind of
             puppet -> bump(Parent, W1);
             driver -> W1
         end,
    {ok, W2#w{stacks = (W2#w.stacks)#{Child => [?IDLE]}}}.

where([{M, F, A, _, _} | _]) -> {M, F, A}.

check_slots([{scenario, idle, 0, _, _} | _]) -> ok;
check_slots([{_, _, _, _, N} | _]) when N >= ?SLOTS -> world_error(too_many_steps);
check_slots(_) -> ok.

bump(P, W) ->
    [{M, F, A, C, N} | Rest] = maps:get(P, W#w.stacks),
    W#w{stacks = (W#w.stacks)#{P => [{M, F, A, C, N + 1} | Rest]}}.

exported(M, F, A, W) ->
    case maps:find(M, W#w.modules) of
        {ok, Fs} -> lists:member({F, A, exported}, Fs);
        error -> false
    end.

declared(M, F, A, W) ->
    case maps:find(M, W#w.modules) of
        {ok, Fs} -> lists:any(fun({X, Y, _}) -> {X, Y} =:= {F, A} end, Fs);
        error -> false
    end.

call_event(Kind, P, {M, F, Args}, W) when is_atom(M), is_atom(F) ->
    proper_list(Args) orelse world_error(bad_call),
    A = length(Args),
    Local = Kind =:= local_call orelse Kind =:= local_tail_call,
    Tail = Kind =:= tail_call orelse Kind =:= local_tail_call,
    %% module_info/0,1 are the compiler's: in OTP they return at once, so
    %% the frame the scenario would go on with cannot be made.
    F =:= module_info andalso (A =:= 0 orelse A =:= 1) andalso
        maps:is_key(M, W#w.modules) andalso world_error(unsupported),
    case Local of
        true -> declared(M, F, A, W) orelse world_error(undef);
        false -> exported(M, F, A, W) orelse world_error(undef)
    end,
    Pid = puppet(P, W),
    Stack = maps:get(P, W#w.stacks),
    [{M0, F0, A0, C0, N0} | Rest] = Stack,
    Local andalso M0 =/= M andalso world_error(not_local),
    Tail orelse check_slots(Stack),
    Step = case Kind of
               call -> {call, M, F, Args};
               try_call -> {try_call, M, F, Args};
               local_call -> {local_call, F, Args};
               tail_call -> {tail_call, M, F, Args};
               local_tail_call -> {local_tail_call, F, Args}
           end,
    Stack1 = case Tail of
                 true -> [{M, F, A, C0, 0} | Rest];
                 false -> [{M, F, A, Kind =:= try_call, 0}, {M0, F0, A0, C0, N0 + 1}
                           | Rest]
             end,
    Pid ! {?STEP, real(Step, W)},
    wait_state(Pid, where(Stack1)),
    {ok, W#w{stacks = (W#w.stacks)#{P => Stack1}}};
call_event(_Kind, _P, _Call, _W) ->
    world_error(bad_call).

proper_list([]) -> true;
proper_list([_ | T]) -> proper_list(T);
proper_list(_) -> false.

%% {do, P, Actions}: checked against the VM's own state first (the same
%% refusals as msc's), then sent to the puppet as one step. The driver
%% itself may only send.
do_event(P, Actions, W) ->
    case is_rpid(P) of
        true -> remote_do_event(P, Actions, W);
        false -> local_do_event(P, Actions, W)
    end.

%% {do, Remote, Actions}: a process of a peer node sends, links, unlinks,
%% traps exits, sends exit signals, exits or sets its sequential trace
%% token.
remote_do_event(P, Actions, W) ->
    proper_list(Actions) orelse world_error(bad_action),
    lists:member(P, W#w.remotes) orelse world_error(noproc),
    lists:all(fun is_remote_action/1, Actions) orelse world_error(unsupported),
    Pid = maps:get(P, W#w.pids),
    %% What it sends this node's puppets, which wait in their idle loops
    %% and leave other messages queued: the first message from another
    %% node has been seen to arrive after the peer answered that its
    %% puppet was done, so its arrival is waited for too.
    Targets = [T || T <- [local_target(To, W) || {send, To, _} <- Actions], is_pid(T)],
    Before = [{T, queue_len(T)} || T <- lists:usort(Targets)],
    Pid ! {?STEP, {do, real(Actions, W)}},
    W1 = lists:foldl(fun(A, Acc) -> relink(P, A, Acc) end, W, Actions),
    %% One that exits is seen gone by settle/1.
    _ = wait_remote(Pid),
    [await_queued(T, N + length([X || X <- Targets, X =:= T]),
                  erlang:monotonic_time(millisecond) + ?WAIT_MS)
     || {T, N} <- Before],
    {ok, W1}.

%% The local puppet a remote send reaches, if any.
local_target(To, W) ->
    case To of
        {Name, Node} when Node =:= node() -> whereis(Name);
        _ ->
            case is_spid(To) andalso maps:get(To, W#w.kind, none) =:= puppet of
                true -> maps:get(To, W#w.pids);
                false -> none
            end
    end.

queue_len(Pid) ->
    case erlang:process_info(Pid, message_queue_len) of
        {message_queue_len, N} -> N;
        undefined -> gone
    end.

await_queued(Pid, N, Deadline) ->
    case queue_len(Pid) of
        gone -> ok;
        Len when Len >= N -> ok;
        _ ->
            erlang:monotonic_time(millisecond) > Deadline
                andalso error({no_message, Pid}),
            receive after 1 -> ok end,
            await_queued(Pid, N, Deadline)
    end.

is_remote_action({send, _, _}) -> true;
is_remote_action({link, P}) -> is_spid(P);
is_remote_action({unlink, P}) -> is_spid(P);
is_remote_action({trap_exit, B}) -> is_boolean(B);
is_remote_action({exit, _}) -> true;
is_remote_action({exit, P, _}) -> is_spid(P);
is_remote_action({seq_trace, _, _}) -> true;
is_remote_action({seq_trace_token, _}) -> true;
is_remote_action(_) -> false.

local_do_event(P, Actions, W) ->
    is_spid(P) orelse world_error(not_a_pid),
    proper_list(Actions) orelse world_error(bad_action),
    lists:all(fun is_action/1, Actions) orelse world_error(bad_action),
    Children = [C || {Spawn, C} <- Actions, Spawn =:= spawn orelse Spawn =:= spawn_link],
    %% A remote child's pid is known only after the step that spawns it;
    %% a local one stands for its placeholder until then, which the puppet
    %% replaces, but it may not die in that step (nor the step end the
    %% puppet, which would take a linked child with it): the driver learns
    %% the children it made from the process table after the step.
    Remote = [C || C <- Children, is_rpid(C)],
    [A || A <- Actions, C <- Remote, A =/= {spawn, C}, A =/= {spawn_link, C},
                        names_atom(C, A)] =:= []
        orelse world_error(unsupported),
    Local = Children -- Remote,
    %% A receive ... after takes the first message that comes while it
    %% waits: a step that waits for a timeout does nothing that may make
    %% one come (an exit signal's 'EXIT', a port's or another node's
    %% answer).
    (not lists:member(receive_timeout, Actions)
     orelse lists:all(fun(A) -> quiet(P, A) end, Actions))
        orelse world_error(unsupported),
    (Local =:= [] orelse
     [A || A <- Actions, element(1, A) =:= exit] =:= []) orelse world_error(unsupported),
    case maps:get(P, W#w.kind, none) of
        driver ->
            lists:all(fun({send, _, _}) -> true;
                         ({exit, _, _}) -> true;
                         (_) -> false
                      end, Actions)
                orelse world_error(unsupported),
            check_actions(P, self(), Actions, W),
            lists:foldl(fun driver_act/2, {ok, W}, Actions);
        _ ->
            Pid = puppet(P, W),
            check_actions(P, Pid, Actions, W),
            Stack = maps:get(P, W#w.stacks),
            check_slots(Stack),
            Exits = [A || {exit, _} = A <- Actions],
            (Exits =:= [] orelse lists:last(Actions) =:= hd(Exits)
             andalso length(Exits) =:= 1) orelse world_error(bad_action),
            %% An exit signal to itself may end it at once: it comes last.
            SelfExits = [A || {exit, T, _} = A <- Actions, T =:= P],
            (SelfExits =:= [] orelse lists:last(Actions) =:= hd(SelfExits)
             andalso length(SelfExits) =:= 1) orelse world_error(bad_action),
            PortsBefore = erlang:ports(),
            ProcsBefore = processes(),
            RemoteBefore = [{N, remote_idle(N)}
                            || N <- lists:usort([rpid_node(C) || C <- Children,
                                                                 is_rpid(C)])],
            Watch = watch_opens(P, Pid, Actions, W),
            Pid ! {?STEP, {do, real(Actions, W)}},
            await_opens(Watch),
            W1 = lists:foldl(fun(A, Acc) -> relink(P, A, Acc) end, W, Actions),
            ExitSignals = [A || {exit, _, _} = A <- Actions],
            case Exits of
                [] when ExitSignals =/= [] ->
                    %% An exit signal to itself, or one that comes back
                    %% through a link as its receiver dies, may end it:
                    %% settle/1 sees it gone then.
                    wait_state_or_gone(Pid, where(Stack)),
                    W2 = bind_opened(Actions, PortsBefore, W1),
                    W3 = bind_spawned(Actions, ProcsBefore, W2),
                    W4 = bind_spawned_remote(Actions, RemoteBefore, W3),
                    {ok, bump_if_frame(P, W4)};
                [] ->
                    wait_state(Pid, where(Stack)),
                    W2 = bind_opened(Actions, PortsBefore, W1),
                    W3 = bind_spawned(Actions, ProcsBefore, W2),
                    W4 = bind_spawned_remote(Actions, RemoteBefore, W3),
                    {ok, bump_if_frame(P, W4)};
                _ ->
                    %% exit/1: an exception like {raise, P, exit, R},
                    %% caught by a pending try_call or the end.
                    after_end(P, Pid, unwind(Stack), W1)
            end
    end.

%% A puppet that opens a port waits in erlang:open_port/2 for the port's
%% answer {Ref, Port}, and one that sends a port a command waits in
%% scenario_act:act/1 for its echo {Port, {data, Data}}: waits its status
%% cannot tell from the one in its idle receive (and asking where it waits
%% would schedule it in). A private session made before the first term (see
%% watch_session/0), which the scenario's sessions never see, traces its
%% receipt of the answers while the step runs.
%% The echo of a command goes to the port's owner, which is not the puppet
%% when another opened the port.
watch_opens(P, Pid, Actions, W) ->
    Opened = [O || {open_port, O, _} <- Actions],
    Timeouts = [Pid || receive_timeout <- Actions],
    Owner = fun(O) ->
                    case lists:member(O, Opened) of
                        true -> Pid;
                        false -> maps:get(maps:get(O, W#w.owners, P), W#w.pids)
                    end
            end,
    Waits = [Pid || _ <- Opened] ++ [Owner(O) || {port_command, O, _} <- Actions]
        ++ Timeouts,
    case Waits of
        [] -> none;
        _ ->
            S = get(watch_session),
            [1 = trace:process(S, Who, true, ['receive']) || Who <- lists:usort(Waits)],
            {S, Waits}
    end.

await_opens(none) -> ok;
await_opens({S, Waits}) ->
    [receive
         {'$watched', {trace, Who, 'receive', {Ref, Port}}}
           when is_reference(Ref), is_port(Port) -> ok;
         {'$watched', {trace, Who, 'receive', {Port, {data, _}}}} when is_port(Port) -> ok;
         {'$watched', {trace, Who, 'receive', timeout}} -> ok
     after ?WAIT_MS -> error({port_answer, Who})
     end || Who <- Waits],
    [1 = trace:process(S, Who, false, ['receive']) || Who <- lists:usort(Waits)],
    ok.

%% The session of watch_opens/2, made while no puppet exists (destroying a
%% session would schedule every process in). Its receive pattern passes
%% only port answers {Ref, Port} and {Port, {data, Data}}, and the timeout
%% of a receive ... after (a step's receive_timeout: its wait looks like
%% any other, and the timer may fire after the driver looked).
watch_session() ->
    %% Its tracer forwards what it gets, tagged: the driver may be a
    %% scenario session's tracer too, getting the very same messages.
    Driver = self(),
    Forwarder = spawn_link(fun() -> forward_watched(Driver) end),
    S = trace:session_create('$scenario_watch', Forwarder, []),
    _ = trace:recv(S, [{['_', '_', {'$1', '$2'}],
                        [{is_reference, '$1'}, {is_port, '$2'}], []},
                       {['_', '_', {'$1', {data, '_'}}], [{is_port, '$1'}], []},
                       {[clock_service, undefined, timeout], [], []}], []),
    put(watch_session, S),
    ok.

forward_watched(Driver) ->
    receive Msg -> Driver ! {'$watched', Msg} end,
    forward_watched(Driver).

%% The driver's actions: a send, or an exit signal, which kills a collector
%% (collectors do not trap exits) unless the reason is normal.
driver_act({send, To, M}, {ok, W}) ->
    catch erlang:send(real(To, W), real(M, W)),
    {ok, W};
driver_act({exit, T, R}, {ok, W}) ->
    Pid = real(T, W),
    exit(Pid, real(R, W)),
    case maps:get(T, W#w.kind) of
        collector when R =/= normal ->
            Mon = erlang:monitor(process, Pid),
            receive {'DOWN', Mon, process, Pid, _} -> ok
            after ?WAIT_MS -> error({no_exit, T})
            end,
            receive {'EXIT', Pid, _} -> ok after ?WAIT_MS -> ok end,
            {ok, W#w{kind = (W#w.kind)#{T => dead_collector}}};
        _ -> {ok, W}
    end.

%% The processes the step spawned, in the order its spawn actions name them
%% (pid numbers grow), idle.
bind_spawned(Actions, Before, W) ->
    Spawned = lists:sort([C || C <- processes() -- Before,
                               erlang:process_info(C, initial_call)
                                   =:= {initial_call, {scenario, idle, 0}}]),
    Names = [S || {Spawn, S} <- Actions, Spawn =:= spawn orelse Spawn =:= spawn_link,
                  is_spid(S)],
    length(Spawned) =:= length(Names) orelse error({spawned, Spawned, Names}),
    lists:foldl(
      fun({S, Pid}, Acc) ->
              wait_state(Pid, {scenario, idle, 0}),
              Acc1 = bind(S, Pid, puppet, Acc),
              Acc1#w{stacks = (Acc1#w.stacks)#{S => [?IDLE]}}
      end, W, lists:zip(Names, Spawned)).

%% The processes the step spawned on peer nodes, in the order its spawn
%% actions name them (pid numbers grow on each node).
bind_spawned_remote(Actions, Before, W) ->
    lists:foldl(
      fun({Node, Old}, Acc) ->
              New = lists:sort(remote_idle(Node) -- Old),
              Names = [C || {Spawn, C} <- Actions,
                            Spawn =:= spawn orelse Spawn =:= spawn_link,
                            is_rpid(C), rpid_node(C) =:= Node],
              length(New) =:= length(Names) orelse error({spawned, New, Names}),
              lists:foldl(fun({S, Pid}, Acc1) -> bind_remote(S, Pid, Acc1) end,
                          Acc, lists:zip(Names, New))
      end, W, Before).

%% The ports the step opened, in the order its open_port actions name them
%% (port numbers grow).
bind_opened(Actions, Before, W) ->
    Opened = lists:sort(erlang:ports() -- Before),
    Names = [S || {open_port, S, _} <- Actions],
    length(Opened) =:= length(Names) orelse error({ports_opened, Opened, Names}),
    lists:foldl(fun({S, Port}, Acc) -> bind(S, Port, port, Acc) end,
                W, lists:zip(Names, Opened)).

relink(P, {spawn_link, C}, W) ->
    relink(P, {link, C}, W);
relink(P, {open_port, O, _}, W) ->
    relink(P, {link, O}, W#w{owners = (W#w.owners)#{O => P}});
relink(P, {port_close, O}, W) ->
    L = maps:map(fun(_, Ps) -> Ps -- [O] end, maps:remove(O, W#w.links)),
    W#w{links = L#{P => maps:get(P, L, []) -- [O]}};
relink(P, {link, O}, W) ->
    L = W#w.links,
    W#w{links = L#{P => maps:get(P, L, []) ++ [O], O => maps:get(O, L, []) ++ [P]}};
relink(P, {unlink, O}, W) ->
    L = W#w.links,
    W#w{links = L#{P => maps:get(P, L, []) -- [O], O => maps:get(O, L, []) -- [P]}};
relink(_P, _, W) ->
    W.

%% P has exited: its links are gone.
unlink_all(P, W) ->
    L = maps:map(fun(_, Ps) -> Ps -- [P] end, maps:remove(P, W#w.links)),
    W#w{links = L}.

%% {allocate, P, Words}: the puppet builds a tuple of Words - 1 elements
%% (Words heap words) in its innermost function, as one step.
allocate_event(P, Words, W) ->
    Pid = puppet(P, W),
    (is_integer(Words) andalso Words >= 0) orelse world_error(not_an_integer),
    Stack = maps:get(P, W#w.stacks),
    check_slots(Stack),
    Pid ! {?STEP, {allocate, Words}},
    wait_state(Pid, where(Stack)),
    {ok, bump_if_frame(P, W)}.

bump_if_frame(P, W) ->
    case maps:get(P, W#w.stacks) of
        [{scenario, idle, 0, _, _} | _] -> W;
        _ -> bump(P, W)
    end.

%% Actions after which nothing comes back to the process in the same step.
quiet(_, {send, To, _}) -> is_spid(To) orelse (is_atom(To) andalso not is_rpid(To));
quiet(_, {Tag, P}) when Tag =:= link; Tag =:= unlink; Tag =:= spawn; Tag =:= spawn_link ->
    is_spid(P);
quiet(_, {exit, _, _}) -> false;
quiet(_, {register, _, _}) -> false;
quiet(_, A) when is_tuple(A) ->
    not lists:member(element(1, A), [open_port, port_command, port_close,
                                     port_control, port_call]);
quiet(_, _) -> true.

is_action('receive') -> true;
is_action(receive_timeout) -> true;
is_action(garbage_collect) -> true;
is_action({exit, _}) -> true;
is_action({exit, P, _}) -> is_spid(P) orelse is_rpid(P);
is_action({send, To, _}) -> is_atom(To) orelse is_tuple(To);
is_action({link, P}) -> is_spid(P) orelse is_sport(P) orelse is_rpid(P);
is_action({unlink, P}) -> is_spid(P) orelse is_sport(P) orelse is_rpid(P);
is_action({register, N, P}) -> is_atom(N) andalso is_sport(P);
is_action({open_port, P, Prog}) -> is_sport(P) andalso is_atom(Prog);
is_action({port_command, P, D}) -> is_sport(P) andalso is_binary(D);
is_action({port_close, P}) -> is_sport(P);
is_action({port_control, P, Op, D}) -> is_sport(P) andalso is_integer(Op) andalso is_binary(D);
is_action({port_call, P, Op, _}) -> is_sport(P) andalso is_integer(Op);
is_action({spawn, C}) -> is_spid(C) orelse is_rpid(C);
is_action({spawn_link, C}) -> is_spid(C) orelse is_rpid(C);
is_action({register, N}) -> is_atom(N) andalso not is_spid(N);
is_action({unregister, N}) -> is_atom(N) andalso not is_spid(N);
is_action({trap_exit, B}) -> is_boolean(B);
is_action({seq_trace, _, _}) -> true;
is_action({seq_trace_token, _}) -> true;
is_action({seq_trace_print, _}) -> true;
is_action({seq_trace_print, _, _}) -> true;
is_action(_) -> false.

check_actions(P, Pid, Actions, W) ->
    {message_queue_len, Q0} = erlang:process_info(Pid, message_queue_len),
    Queued = case P of ?DRIVER -> 0; _ -> Q0 end,
    Linked = maps:get(P, W#w.links, []),
    %% The fold: {Queued, Linked, World}, where the world's kinds count the
    %% children spawned by the actions so far as live puppets.
    lists:foldl(fun(A, {Q, L, WA}) -> check_action(P, A, {Q, L}, WA) end,
                {Queued, Linked, W}, Actions),
    ok.

check_action(P, A, {Q, L}, W) ->
    {Q1, L1} = check_one(P, A, {Q, L}, W),
    {Q1, L1, case A of
                 {Spawn, C} when Spawn =:= spawn; Spawn =:= spawn_link ->
                     case is_spid(C) of
                         true -> W#w{kind = (W#w.kind)#{C => puppet},
                                     stacks = (W#w.stacks)#{C => [?IDLE]}};
                         false -> W
                     end;
                 _ -> W
             end}.

check_one(_P, 'receive', {Q, L}, _W) ->
    Q > 0 orelse world_error(empty_queue),
    {Q - 1, L};
check_one(_P, receive_timeout, {Q, L}, _W) ->
    Q =:= 0 orelse world_error(not_empty),
    {Q, L};
check_one(_P, {Spawn, C}, {Q, L}, W) when Spawn =:= spawn; Spawn =:= spawn_link ->
    case is_rpid(C) of
        true ->
            check_remote_child(C, W),
            {Q, [C || Spawn =:= spawn_link] ++ L};
        false ->
            maps:get(C, W#w.kind, none) =:= dead orelse world_error(already_exists),
            {Q, [C || Spawn =:= spawn_link] ++ L}
    end;
check_one(_P, {open_port, O, _}, {Q, L}, W) ->
    maps:get(O, W#w.kind, none) =:= dead orelse world_error(already_exists),
    {Q, [O | L]};
check_one(P, {link, O}, {Q, L}, W) ->
    (is_sport(O) orelse lists:member(O, W#w.remotes) orelse
     (maps:get(O, W#w.kind, none) =:= puppet andalso maps:is_key(O, W#w.stacks)
      andalso O =/= P)) orelse world_error(noproc),
    lists:member(O, L) andalso world_error(already_linked),
    {Q, [O | L]};
check_one(_P, {unlink, O}, {Q, L}, _W) ->
    lists:member(O, L) orelse world_error(not_linked),
    {Q, L -- [O]};
check_one(P, {register, N}, Acc, W) ->
    whereis(N) =:= undefined orelse world_error(already_registered),
    erlang:process_info(maps:get(P, W#w.pids), registered_name) =:= []
        orelse world_error(already_registered),
    Acc;
check_one(P, {unregister, N}, Acc, W) ->
    Owner = whereis(N),
    (Owner =:= maps:get(P, W#w.pids) orelse is_port(Owner))
        orelse world_error(not_registered),
    Acc;
check_one(P, {send, P, _}, {Q, L}, _W) ->
    %% It takes what it sends itself at its next receive.
    {Q + 1, L};
check_one(_P, {send, To, _}, Acc, W) ->
    case is_spid(To) of
        true ->
            case maps:get(To, W#w.kind, none) of
                driver -> world_error(unsupported);
                _ -> Acc
            end;
        false -> Acc
    end;
check_one(P, {exit, T, _}, Acc, W) ->
    case maps:get(T, W#w.kind, none) of
        puppet when T =/= P -> maps:is_key(T, W#w.stacks) orelse world_error(noproc);
        puppet -> ok;
        collector -> ok;
        remote -> lists:member(T, W#w.remotes) orelse world_error(noproc);
        _ -> world_error(noproc)
    end,
    Acc;
check_one(_P, _, Acc, _W) ->
    Acc.

return_event(P, Value, W) ->
    Pid = puppet(P, W),
    [_ | Rest] = maps:get(P, W#w.stacks),
    Pid ! {?STEP, {return, real(Value, W)}},
    after_end(P, Pid, Rest, W).

raise_event(P, Class, Reason, W) ->
    lists:member(Class, [error, exit, throw]) orelse world_error(bad_class),
    Pid = puppet(P, W),
    Pid ! {?STEP, {raise, Class, real(Reason, W)}},
    after_end(P, Pid, unwind(maps:get(P, W#w.stacks)), W).

%% The innermost function has ended (returned, or raised up to the frame
%% that catches): Rest is what is left of the stack.
after_end(P, Pid, [], W) ->
    await_gone(Pid, P),
    {ok, unlink_all(P, W#w{stacks = maps:remove(P, W#w.stacks)})};
after_end(P, Pid, Rest, W) ->
    wait_state(Pid, where(Rest)),
    {ok, W#w{stacks = (W#w.stacks)#{P => Rest}}}.

unwind([]) -> [];
unwind([{_, _, _, true, _} | Rest]) -> Rest;
unwind([_ | Rest]) -> unwind(Rest).

%% Waits until Pid is blocked in a receive again (it has taken the step:
%% sending it made the puppet runnable, so waiting means it took it and
%% blocked in its next receive). Only `status` is asked: items such as
%% current_function, messages or links are answered by the puppet itself
%% through a signal, which schedules it in (and shows with `running`
%% tracing). With SCENARIO_VERIFY=1 in the environment the function it
%% waits in is checked against the world's model too, at that price.
wait_state(Pid, MFA) ->
    wait_state(Pid, MFA, erlang:monotonic_time(millisecond) + ?WAIT_MS).

wait_state_or_gone(Pid, MFA) ->
    try wait_state(Pid, MFA)
    catch throw:{gone, Pid} -> ok
    end.

wait_state(Pid, MFA, Deadline) ->
    Info = case erlang:process_info(Pid, [status]) of
               [{status, waiting}] = Waiting ->
                   case os:getenv("SCENARIO_VERIFY") of
                       "1" -> Waiting ++ [erlang:process_info(Pid, current_function)];
                       _ -> Waiting ++ [{current_function, MFA}]
                   end;
               Other0 -> Other0
           end,
    case Info of
        [{status, waiting}, {current_function, MFA}] -> ok;
        undefined -> throw({gone, Pid});
        Other ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> error({stuck, Pid, MFA, Other});
                false ->
                    receive after 1 -> ok end,
                    wait_state(Pid, MFA, Deadline)
            end
    end.
