#!/usr/bin/env escript
%% -*- erlang -*-
%%! +S 1
%%
%% OTP-19840 (OTP 28.2): a BIF call traced by two trace sessions. Each
%% variant sets patterns on erlang:phash2/1 in sessions s1 and s2 (both
%% trace calls of one process), the process calls the BIF once, and the
%% script prints {Variant, CallsS1, CallsS2, TracedS1, TracedS2}.: the call
%% messages each session's tracer got and what trace:info/3 says of the
%% BIF in each. OTP 27 delivers nothing to either once any session turns
%% any pattern on the BIF off; OTP 29 keeps the sessions apart.
%%
%%     chroot /opt/otp27 escript /tmp/probe.escript > otp27.terms
%%     chroot /opt/otp29 escript /tmp/probe.escript > otp29.terms
%%
%% (copy the script into the root's /tmp first). The scenario world cannot
%% show this (OTP's side cannot declare BIFs), so runtime/tests/bif_sessions.rs
%% replays the same variants on the trace core.

main(_) ->
    io:format("%% ~s~n", [erlang:system_info(system_version) -- "\n"]),
    [io:format("~p.~n", [run(V)]) || V <- variants()],
    ok.

variants() ->
    [global_off, untraced_off, local_off, local_and_global, count_off,
     meta_off, other_arity_off, off_then_other_on, on_again].

run(V) ->
    C1 = spawn(fun() -> collect([]) end),
    C2 = spawn(fun() -> collect([]) end),
    S1 = trace:session_create(s1, C1, []),
    S2 = trace:session_create(s2, C2, []),
    P = spawn(fun loop/0),
    1 = trace:process(S1, P, true, [call]),
    1 = trace:process(S2, P, true, [call]),
    MFA = {erlang, phash2, 1},
    F = fun(S, How, Flags) -> trace:function(S, MFA, How, Flags) end,
    case V of
        global_off -> F(S1, true, [global]), F(S2, true, [global]), F(S2, false, [global]);
        untraced_off -> F(S1, true, [global]), F(S2, false, [global]);
        local_off -> F(S1, true, [local]), F(S2, true, [local]), F(S2, false, [local]);
        local_and_global -> F(S1, true, [local]), F(S2, true, [global]), F(S2, false, [global]);
        count_off -> F(S1, true, [global]), F(S2, true, [call_count]), F(S2, false, [call_count]);
        meta_off -> F(S1, true, [global]), F(S2, true, [meta]), F(S2, false, [meta]);
        other_arity_off ->
            F(S1, true, [global]),
            trace:function(S2, {erlang, phash2, 2}, true, [global]),
            trace:function(S2, {erlang, phash2, 2}, false, [global]);
        off_then_other_on -> F(S1, true, [global]), F(S2, true, [global]),
                             F(S1, false, [global]), F(S2, true, [global]);
        on_again -> F(S1, true, [global]), F(S2, false, [global]), F(S2, true, [call_count])
    end,
    P ! {go, self()},
    receive done -> ok end,
    Ref = erlang:trace_delivered(P),
    receive {trace_delivered, P, Ref} -> ok end,
    Traced = fun(S) -> {traced, T} = trace:info(S, MFA, traced), T end,
    R = {V, calls(C1), calls(C2), Traced(S1), Traced(S2)},
    true = trace:session_destroy(S1),
    true = trace:session_destroy(S2),
    exit(P, kill),
    R.

loop() ->
    receive {go, From} -> _ = erlang:phash2(x), From ! done, loop() end.

collect(Acc) ->
    receive
        {get, From} -> From ! {calls, length(Acc)};
        {trace, _, call, _} = M -> collect([M | Acc]);
        _ -> collect(Acc)
    end.

calls(C) ->
    C ! {get, self()},
    receive {calls, N} -> N end.
