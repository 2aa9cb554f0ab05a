%% msc_tracer across a cluster: file tracers started on two peer nodes at
%% once (erpc over distribution), each writing its own file.
-module(msc_cluster_tests).

-include_lib("eunit/include/eunit.hrl").

-define(CALLS, 40).

cluster_test_() ->
    {timeout, 120, fun() ->
        ok = distributed(),
        Ebin = filename:dirname(code:which(msc_tracer)),
        Peers = [begin
                     {ok, Peer, Node} = peer:start_link(#{name => Name, host => "127.0.0.1",
                                                          longnames => true, args => ["-pa", Ebin]}),
                     {Peer, Node}
                 end || Name <- [peer:random_name(msc_a), peer:random_name(msc_b)]],
        Nodes = [Node || {_, Node} <- Peers],
        Dir = filename:join(os:getenv("MSC_TEST_DATA"), "cluster"),
        ok = filelib:ensure_path(Dir),
        [{module, _} = erpc:call(N, code, ensure_loaded, [msc_tracer_tests]) || N <- Nodes],
        [1 = erpc:call(N, erlang, trace_pattern, [{msc_tracer_tests, f, 1}, true, [local]]) || N <- Nodes],
        {ok, Tracers} = msc_tracer:start_cluster(Nodes, Dir, new, {[call], []}),
        [ok = erpc:call(N, msc_tracer_tests, work, [?CALLS]) || N <- Nodes],
        ?assertEqual([{N, ok} || N <- Nodes], msc_tracer:stop_cluster(Tracers)),
        [begin
             Path = filename:join(Dir, atom_to_list(N) ++ ".trace"),
             Calls = [M || {trace, Pid, call, {msc_tracer_tests, f, [_]}} = M <- read(Path), node(Pid) =:= N],
             ?assertEqual(?CALLS, length(Calls))
         end || N <- Nodes],
        ?assertMatch({error, [{'nonode@nowhere', _}]},
                     msc_tracer:start_cluster(['nonode@nowhere'], Dir, new, {[call], []})),
        [peer:stop(Peer) || {Peer, _} <- Peers]
    end}.

distributed() ->
    case node() of
        nonode@nohost ->
            _ = os:cmd("epmd -daemon"),
            timer:sleep(200),
            Name = list_to_atom("msc_test_" ++ os:getpid() ++ "@127.0.0.1"),
            {ok, _} = net_kernel:start(Name, #{name_domain => longnames}),
            ok;
        _ ->
            ok
    end.

read(Path) ->
    Self = self(),
    dbg:trace_client(file, Path, {fun(end_of_trace, _) -> Self ! {done, Path};
                                     (M, _) -> Self ! {message, Path, M} end, 0}),
    collect(Path).

collect(Path) ->
    receive
        {message, Path, M} -> [M | collect(Path)];
        {done, Path} -> []
    after 5000 -> error(timeout)
    end.
