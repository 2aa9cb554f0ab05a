%% Random fun2ms case generator for gen.escript (random.cases).
%%
%% Generates {Dialect, FunText, Bindings} triples as text (not via erl_pp):
%% random whitespace (spaces, tabs, newlines, comments) between tokens and
%% redundant parentheses, so that error lines and columns vary. About 70% of
%% the funs are meant to be translatable, the rest carry one or two injected
%% errors (or are not funs / do not parse). Uses only the rand process state,
%% which gen.escript seeds with rand:seed(exsss, {1,2,3}).
-module(fungen).
-export([cases/1]).

-record(st, {dialect, vars = [], env = [], guard = false}).

cases(N) -> cases(N, #{}, []).

cases(0, _Seen, Acc) -> lists:reverse(Acc);
cases(N, Seen, Acc) ->
    C = one(),
    case maps:is_key(C, Seen) of
        true -> cases(N, Seen, Acc);
        false -> cases(N - 1, Seen#{C => true}, [C | Acc])
    end.

%% ---------------------------------------------------------------------------
%% Helpers
%% ---------------------------------------------------------------------------

u(N) -> rand:uniform(N).
p(P) -> rand:uniform() < P.
pick(L) -> lists:nth(u(length(L)), L).

%% Weighted pick: [{Weight, Value}]
wpick(L) ->
    Tot = lists:sum([W || {W, _} <- L]),
    wpick(u(Tot), L).
wpick(R, [{W, V} | _]) when R =< W -> V;
wpick(R, [{W, _} | T]) -> wpick(R - W, T).

join([], _Sep) -> [];
join([X], _Sep) -> X;
join([X | Xs], Sep) -> X ++ [Sep] ++ join(Xs, Sep).

%% An expression is {Kind, Tokens}; Kind = op means it needs parentheses
%% when used as an operand.
prim(T) -> {prim, T}.
opx(T) -> {op, T}.

toks({_, T}) -> T.

%% Operand position: parenthesise operator expressions (and sometimes
%% anything, redundantly).
operand({op, T}) -> maybe_more_parens(["("] ++ T ++ [")"]);
operand({prim, T}) -> maybe_parens(T).

maybe_parens(T) ->
    case u(100) of
        N when N =< 8 -> ["("] ++ T ++ [")"];
        N when N =< 10 -> ["(", "("] ++ T ++ [")", ")"];
        _ -> T
    end.

maybe_more_parens(T) ->
    case p(0.05) of
        true -> ["("] ++ T ++ [")"];
        false -> T
    end.

%% Element position (tuple element, list element, argument, body expr).
elem(E) -> maybe_parens(toks(E)).

%% ---------------------------------------------------------------------------
%% Rendering with random whitespace
%% ---------------------------------------------------------------------------

tight("(") -> true;
tight(")") -> true;
tight("{") -> true;
tight("}") -> true;
tight("[") -> true;
tight("]") -> true;
tight(",") -> true;
tight(";") -> true;
tight("#{") -> true;
tight(_) -> false.

render([]) -> "";
render([T]) -> T;
render([A, B | Rest]) when A =:= "."; B =:= "." ->
    %% "." followed by white space would scan as the end-of-form dot
    A ++ render([B | Rest]);
render([A, B | Rest]) ->
    Sep = case tight(A) orelse tight(B) of
              true ->
                  case p(0.6) of
                      true -> "";
                      false -> space()
                  end;
              false -> space()
          end,
    A ++ Sep ++ render([B | Rest]).

space() ->
    wpick([{70, " "}, {5, "  "}, {8, "\n"}, {5, "\t"}, {6, "\n    "},
           {2, " % c\n"}, {3, "\n\t"}, {1, "\n\n"}]).

%% ---------------------------------------------------------------------------
%% One case
%% ---------------------------------------------------------------------------

one() ->
    Dialect = pick([table, trace]),
    Env = case p(0.3) of
              true -> env(u(3));
              false -> []
          end,
    Bindings = [{list_to_atom(N), V} || {N, V, _} <- Env],
    St0 = #st{dialect = Dialect, env = Env},
    Kind = wpick([{70, ok}, {25, error}, {2, notfun}, {3, parse}]),
    Text = case Kind of
               notfun -> render(notfun());
               parse -> render(break(fun_toks(St0, ok)));
               _ -> render(fun_toks(St0, Kind))
           end,
    {Dialect, Text, Bindings}.

fun_toks(St, Kind) ->
    NC = wpick([{70, 1}, {20, 2}, {10, 3}]),
    Errs = case Kind of
               ok -> [];
               error ->
                   %% one or two errors, each in a random clause
                   NE = wpick([{85, 1}, {15, 2}]),
                   [{u(NC), err_place()} || _ <- lists:seq(1, NE)]
           end,
    Clauses = [clause(St, [P || {I, P} <- Errs, I =:= C]) || C <- lists:seq(1, NC)],
    ["fun"] ++ join(Clauses, ";") ++ ["end"].

err_place() -> wpick([{25, head}, {35, guard}, {40, body}]).

notfun() ->
    pick([["fun", "foo", "/", "1"],
          ["fun", "m", ":", "f", "/", integer_to_list(u(3))],
          ["fun", "F", "(", "X", ")", "->", "X", "end"],
          ["fun", "Loop", "(", "[", "]", ")", "->", "ok", ";", "Loop", "(", "[", "_",
           "|", "T", "]", ")", "->", "Loop", "(", "T", ")", "end"],
          [pick(["foo", "42", "X", "\"s\"", "{a}"])],
          ["(", "fun", "foo", "/", "0", ")"]]).

%% Drop or duplicate a random token to break the syntax (usually).
break(Toks) ->
    I = u(length(Toks)),
    {A, [X | B]} = lists:split(I - 1, Toks),
    case u(3) of
        1 -> A ++ B;
        2 -> A ++ [X, X | B];
        3 -> A ++ [X, pick([")", "end", ",", "->", "'"]) | B]
    end.

%% ---------------------------------------------------------------------------
%% Environment (Bindings)
%% ---------------------------------------------------------------------------

env(N) ->
    Names = ["Lim", "Tag", "Max", "K", "Cfg", "Bin", "Xs", "A"],
    lists:usort(fun({A, _, _}, {B, _, _}) -> A =< B end,
                [env_value(pick(Names)) || _ <- lists:seq(1, N)]).

env_value(Name) ->
    {V, T} = wpick([{30, {u(1000) - 1, int}},
                    {5, {-u(100), int}},
                    {3, {1 bsl (60 + u(20)), int}},
                    {8, {pick([foo, bar, '$1', 'hello world', 'ø', true]), atom}},
                    {8, {{u(9), pick([a, b])}, tuple}},
                    {6, {[u(9), u(9)], list}},
                    {6, {#{a => u(9)}, map}},
                    {6, {pick([<<"xy">>, <<>>, <<1, 2, 3>>]), binary}},
                    {4, {u(9) + 0.5, float}},
                    {4, {"ab", list}}]),
    {Name, V, T}.

env_vars(#st{env = Env, vars = Vs}) ->
    [N || {N, _, _} <- Env, not lists:member(N, Vs)].

int_env_vars(#st{env = Env, vars = Vs}) ->
    [N || {N, V, int} <- Env, not lists:member(N, Vs), V >= 0, V < 256].

%% ---------------------------------------------------------------------------
%% Clauses
%% ---------------------------------------------------------------------------

clause(St0, Errs) ->
    HeadErr = lists:member(head, Errs),
    {HeadToks, St1} = head(St0, HeadErr),
    GuardErr = lists:member(guard, Errs),
    GuardToks = case GuardErr orelse p(0.5) of
                    true -> ["when"] ++ guard(St1#st{guard = true}, GuardErr);
                    false -> []
                end,
    BodyErr = lists:member(body, Errs),
    ["("] ++ HeadToks ++ [")"] ++ GuardToks ++ ["->"] ++ body(St1, BodyErr).

%% ---------------------------------------------------------------------------
%% Heads
%% ---------------------------------------------------------------------------

head(St, true) ->
    case u(10) of
        1 -> whole_head_error(St);
        _ -> head1(St, true)
    end;
head(St, false) -> head1(St, false).

whole_head_error(St) ->
    case u(6) of
        1 -> {[], St};
        2 ->
            {T1, St1} = pat(St, 1, false),
            {T2, St2} = pat(St1, 1, false),
            {T1 ++ [","] ++ T2, St2};
        3 -> {[integer_to_list(u(99))], St};
        4 ->
            %% the other dialect's container
            {T, St1} = container(St#st{dialect = other(St#st.dialect)}, false),
            {T, St1#st{dialect = St#st.dialect}};
        5 -> {["#{", "a", ":=", "A", "}"], St#st{vars = ["A"]}};
        6 ->
            {T1, St1} = container(St, false),
            {T2, St2} = container(St1, false),
            {T1 ++ ["="] ++ T2, St2}
    end.

other(table) -> trace;
other(trace) -> table.

head1(St, Err) ->
    case u(100) of
        N when N =< 10, not Err ->
            V = pick(["X", "Obj", "_", "Args"]),
            Vs = case V of "_" -> []; _ -> [V] end,
            {[V], St#st{vars = Vs}};
        N when N =< 25 ->
            %% top-level match, either side
            {T, St1} = container(St, Err),
            V = fresh(St1),
            St2 = St1#st{vars = [V | St1#st.vars]},
            case p(0.5) of
                true -> {[V, "="] ++ T, St2};
                false -> {T ++ ["="] ++ [V], St2}
            end;
        _ -> container(St, Err)
    end.

container(St, Err) ->
    N = wpick([{5, 0}, {25, 1}, {35, 2}, {25, 3}, {10, 4}]),
    ErrAt = case Err of
                true -> u(max(N, 1));
                false -> 0
            end,
    {Ps, St1} = pats(St, N, 1, ErrAt, []),
    ErrPs = case Err andalso N =:= 0 of
                true -> [head_error(St1)];
                false -> []
            end,
    All = Ps ++ [T || {T, _} <- ErrPs],
    St2 = lists:foldl(fun({_, S}, _) -> S end, St1, ErrPs),
    case St#st.dialect of
        table -> {["{"] ++ join(All, ",") ++ ["}"], St2};
        trace ->
            case All =/= [] andalso p(0.15) of
                true ->
                    V = fresh(St2),
                    {["["] ++ join(All, ",") ++ ["|", V, "]"],
                     St2#st{vars = [V | St2#st.vars]}};
                false -> {["["] ++ join(All, ",") ++ ["]"], St2}
            end
    end.

pats(St, N, I, _ErrAt, Acc) when I > N -> {lists:reverse(Acc), St};
pats(St, N, I, ErrAt, Acc) ->
    {T, St1} = case I =:= ErrAt of
                   true -> pat(St, 1, true);
                   false -> pat(St, 1, false)
               end,
    pats(St1, N, I + 1, ErrAt, [T | Acc]).

fresh(#st{vars = Vs, env = Env}) ->
    Pool = ["A", "B", "C", "D", "X", "Y", "Z", "H", "T", "N", "M", "Key", "Val",
            "First", "Rest", "E1", "E2", "Lim", "K"],
    %% env names appear in the pool: a head variable with the same name as
    %% a binding shadows it
    Free = [V || V <- Pool, not lists:member(V, Vs)],
    _ = Env,
    case Free of
        [] -> "V" ++ integer_to_list(u(1000));
        _ -> pick(Free)
    end.

%% pat(St, Depth, Err) -> {Tokens, St}
pat(St, _Depth, true) ->
    case p(0.3) of
        true -> head_error(St);
        false ->
            %% nest the error inside a structure
            {T, St1} = head_error(St),
            {Other, St2} = pat(St1, 3, false),
            case u(3) of
                1 -> {["{"] ++ Other ++ [","] ++ T ++ ["}"], St2};
                2 -> {["["] ++ T ++ [","] ++ Other ++ ["]"], St2};
                3 -> {["#{", atom(), ":="] ++ T ++ ["}"], St2}
            end
    end;
pat(St, Depth, false) ->
    W = case Depth >= 3 of
            true -> [{40, var}, {10, repvar}, {12, wild}, {3, uvar}, {10, atom},
                     {10, int}, {3, float}, {3, str}, {2, char}];
            false -> [{30, var}, {8, repvar}, {10, wild}, {3, uvar}, {8, atom},
                      {8, int}, {2, float}, {3, str}, {2, char}, {8, tuple},
                      {6, list}, {3, cons}, {3, map}, {3, bin}, {2, strapp},
                      {2, dollar}]
        end,
    case wpick(W) of
        var ->
            V = fresh(St),
            {[V], St#st{vars = [V | St#st.vars]}};
        repvar ->
            case St#st.vars of
                [] -> {["_"], St};
                Vs -> {[pick(Vs)], St}
            end;
        wild -> {["_"], St};
        uvar ->
            V = "_" ++ pick(["Ign", "X", "Unused"]),
            {[V], St#st{vars = [V | St#st.vars]}};
        atom -> {[atom()], St};
        int -> {int_pat(), St};
        float -> {float_lit(), St};
        str -> {[str_lit()], St};
        char -> {[pick(["$a", "$\\n", "$z", "$ø"])], St};
        dollar -> {[pick(["'$_'", "'$$'", "'$abc'", "'$x1'"])], St};
        tuple ->
            {Ps, St1} = pat_list(St, Depth + 1, u(3) - 1),
            {["{"] ++ join(Ps, ",") ++ ["}"], St1};
        list ->
            {Ps, St1} = pat_list(St, Depth + 1, u(3) - 1),
            {["["] ++ join(Ps, ",") ++ ["]"], St1};
        cons ->
            {Ps, St1} = pat_list(St, Depth + 1, u(2)),
            {T, St2} = pat(St1, Depth + 1, false),
            {["["] ++ join(Ps, ",") ++ ["|"] ++ T ++ ["]"], St2};
        map ->
            {Ps, St1} = pat_list(St, Depth + 1, u(2)),
            Fs = [[atom(), ":="] ++ P || P <- Ps],
            {["#{"] ++ join(Fs, ",") ++ ["}"], St1};
        bin -> {bin_lit(), St};
        strapp ->
            V = fresh(St),
            {[str_lit(), "++", V], St#st{vars = [V | St#st.vars]}}
    end.

pat_list(St, _Depth, 0) -> {[], St};
pat_list(St, Depth, N) ->
    {T, St1} = pat(St, Depth, false),
    {Ts, St2} = pat_list(St1, Depth, N - 1),
    {[T | Ts], St2}.

head_error(St) ->
    V = fresh(St),
    St1 = St#st{vars = [V | St#st.vars]},
    case u(9) of
        1 -> {[pick(["'$1'", "'$2'", "'$0'", "'$-1'", "'$+3'"])], St};
        2 -> {[V, "=", "{", "_", "}"], St1};
        3 -> {["{", V, "}", "=", "_"], St1};
        4 -> {["<<", V, ":", "8", ">>"], St1};
        5 -> {["<<", "\"ab\"", ",", V, "/", "binary", ">>"], St1};
        6 -> {["#", "rec", "{", "f", "=", V, "}"], St1};
        7 -> {["1", "+", "2"], St};
        8 -> {["#", "rec", ".", "f"], St};
        9 -> {["-", V], St1}
    end.

atom() ->
    pick(["a", "b", "foo", "ok", "error", "true", "false", "'hello world'", "'A'",
          "undefined", "'føø'", "nil", "x"]).

int_pat() ->
    case u(10) of
        1 -> ["-", integer_to_list(u(100))];
        2 -> ["16#" ++ integer_to_list(u(255), 16)];
        3 -> [integer_to_list(1 bsl (60 + u(20)))];
        _ -> [integer_to_list(u(100) - 1)]
    end.

float_lit() ->
    [pick(["1.5", "0.0", "2.0e3", "3.25", "1.0e-2"])].

str_lit() ->
    pick(["\"abc\"", "\"\"", "\"x\"", "\"a b\"", "\"ø\"", "\"a\\nb\""]).

bin_lit() ->
    pick([["<<", ">>"], ["<<", "1", ",", "2", ">>"], ["<<", "\"abc\"", ">>"],
          ["<<", "1", ":", "3", ">>"], ["<<", "\"ø\"", "/", "utf8", ">>"],
          ["<<", "255", ",", "\"z\"", ">>"], ["<<", "7", ":", "4", ",", "1", ":", "4", ">>"]]).

%% ---------------------------------------------------------------------------
%% Guards
%% ---------------------------------------------------------------------------

guard(St, Err) ->
    NAlt = wpick([{75, 1}, {18, 2}, {7, 3}]),
    ErrAlt = case Err of true -> u(NAlt); false -> 0 end,
    Alts = [guard_alt(St, I =:= ErrAlt) || I <- lists:seq(1, NAlt)],
    join(Alts, ";").

guard_alt(St, Err) ->
    NT = wpick([{60, 1}, {30, 2}, {10, 3}]),
    ErrT = case Err of true -> u(NT); false -> 0 end,
    Tests = [case I =:= ErrT of
                 true -> elem(nest_err(St, err_expr(St)));
                 false -> elem(gtest(St, 1))
             end || I <- lists:seq(1, NT)],
    join(Tests, ",").

anyvar(St) ->
    case St#st.vars ++ env_vars(St) of
        [] -> undefined;
        L -> pick([V || V <- L, V =/= "_"] ++ ["1"])
    end.

headvar(St) ->
    case [V || V <- St#st.vars, V =/= "_"] of
        [] -> "1";
        L -> pick(L)
    end.

gtest(St, Depth) ->
    case wpick([{25, typetest}, {30, cmp}, {8, boolop}, {4, notop}, {5, oldtest},
                {3, trueatom}, {4, mapkey}, {3, isrec}, {3, seqtrace},
                {3, erltest}, {2, constcmp}]) of
        typetest ->
            prim([pick(["is_atom", "is_integer", "is_float", "is_list", "is_number",
                        "is_tuple", "is_binary", "is_map", "is_pid", "is_port",
                        "is_reference", "is_function"]),
                  "(", headvar(St), ")"]);
        cmp ->
            opx(operand(gexpr(St, Depth + 1)) ++ [cmpop()] ++ operand(gexpr(St, Depth + 1)));
        boolop when Depth < 3 ->
            opx(operand(gtest(St, Depth + 1)) ++ [pick(["andalso", "orelse", "and", "or", "xor"])]
                ++ operand(gtest(St, Depth + 1)));
        notop when Depth < 3 -> opx(["not"] ++ operand(gtest(St, Depth + 1)));
        oldtest when Depth =:= 1 ->
            %% only at the top level of a guard (otherwise error 17)
            prim([pick(["integer", "atom", "float", "list", "tuple", "binary",
                        "number", "function", "pid"]), "(", headvar(St), ")"]);
        mapkey -> prim(["is_map_key", "(", atom(), ",", headvar(St), ")"]);
        isrec -> prim(["is_record", "(", headvar(St), ",", anyvar_or(St, "foo"), ")"]);
        seqtrace -> prim(["is_seq_trace", "(", ")"]);
        erltest -> prim(["erlang", ":", pick(["is_atom", "is_list", "is_integer"]), "(",
                         headvar(St), ")"]);
        constcmp -> opx(int_lit() ++ [cmpop()] ++ int_lit());
        _ -> prim(["true"])
    end.

anyvar_or(St, Def) ->
    case anyvar(St) of
        undefined -> Def;
        V -> V
    end.

cmpop() -> pick([">", ">=", "<", "=<", "==", "=:=", "/=", "=/="]).

int_lit() ->
    case u(8) of
        1 -> ["-", integer_to_list(u(50))];
        2 -> ["$" ++ pick(["a", "z", "0"])];
        3 -> ["16#" ++ integer_to_list(u(4095), 16)];
        _ -> [integer_to_list(u(100) - 1)]
    end.

%% Guard/body value expressions.
gexpr(St, Depth) ->
    W = case Depth >= 3 of
            true -> [{40, var}, {15, int}, {8, atom}, {3, float}, {4, envvar}];
            false -> [{30, var}, {10, int}, {5, atom}, {2, float}, {6, envvar},
                      {12, arith}, {4, fold}, {12, bif}, {3, erlbif}, {2, unary},
                      {2, obj}, {2, tuple}]
        end,
    case wpick(W) of
        var -> prim([headvar(St)]);
        envvar ->
            case env_vars(St) of
                [] -> prim([headvar(St)]);
                L -> prim([pick(L)])
            end;
        int -> prim(int_lit());
        atom -> prim([atom()]);
        float -> prim(float_lit());
        arith ->
            opx(operand(gexpr(St, Depth + 1)) ++
                    [pick(["+", "-", "*", "div", "rem", "band", "bor", "bxor", "bsl",
                           "bsr", "/"])] ++ operand(gexpr(St, Depth + 1)));
        fold -> opx(int_lit() ++ [pick(["+", "*", "-"])] ++ int_lit());
        unary -> opx([pick(["-", "bnot", "+"])] ++ operand(gexpr(St, Depth + 1)));
        bif -> bif(St, Depth, []);
        erlbif -> bif(St, Depth, ["erlang", ":"]);
        obj -> prim([pick(["object", "bindings"]), "(", ")"]);
        tuple ->
            prim(["{"] ++ elem(gexpr(St, Depth + 1)) ++ [","]
                 ++ elem(gexpr(St, Depth + 1)) ++ ["}"])
    end.

bif(St, Depth, Pre) ->
    A = fun() -> elem(gexpr(St, Depth + 1)) end,
    V = fun() -> [headvar(St)] end,
    prim(Pre ++
             case u(16) of
                 1 -> ["abs", "("] ++ A() ++ [")"];
                 2 -> ["element", "("] ++ int_lit() ++ [","] ++ V() ++ [")"];
                 3 -> ["hd", "("] ++ V() ++ [")"];
                 4 -> ["tl", "("] ++ V() ++ [")"];
                 5 -> ["length", "("] ++ V() ++ [")"];
                 6 -> [pick(["max", "min"]), "("] ++ A() ++ [","] ++ A() ++ [")"];
                 7 -> ["node", "("] ++ pick([[], V()]) ++ [")"];
                 8 -> [pick(["round", "trunc", "float"]), "("] ++ A() ++ [")"];
                 9 -> [pick(["size", "byte_size", "bit_size", "map_size"]), "("] ++ V() ++ [")"];
                 10 -> ["map_get", "(", atom(), ","] ++ V() ++ [")"];
                 11 -> ["binary_part", "("] ++ V() ++ [",", "0", ",", "1", ")"];
                 12 -> ["binary_part", "("] ++ V() ++ [",", "{", "0", ",", "1", "}", ")"];
                 13 -> ["self", "(", ")"];
                 14 when Pre =:= [] -> ["get_tcw", "(", ")"];
                 _ -> ["abs", "("] ++ V() ++ [")"]
             end).

%% ---------------------------------------------------------------------------
%% Bodies
%% ---------------------------------------------------------------------------

body(St, Err) ->
    N = wpick([{60, 1}, {28, 2}, {12, 3}]),
    ErrAt = case Err of true -> u(N); false -> 0 end,
    Es = [case I =:= ErrAt of
              true -> elem(nest_err(St, err_expr(St)));
              false -> elem(bexpr(St, 1))
          end || I <- lists:seq(1, N)],
    join(Es, ",").

bexpr(St, Depth) ->
    W = case Depth >= 3 of
            true -> [{50, gexpr}, {10, str}, {5, dollar}, {5, bin}];
            false -> [{30, gexpr}, {12, tuple}, {8, list}, {4, cons}, {5, map},
                      {12, action}, {4, bin}, {3, str}, {2, dollar}, {2, obj},
                      {3, test}, {2, nil}]
        end,
    case wpick(W) of
        gexpr -> gexpr(St, Depth);
        str -> prim([str_lit()] ++ case p(0.2) of true -> [str_lit()]; false -> [] end);
        dollar -> prim([pick(["'$1'", "'$_'", "'$abc'", "'$$'"])]);
        bin -> body_bin(St);
        tuple ->
            Es = [elem(bexpr(St, Depth + 1)) || _ <- lists:seq(1, u(4) - 1)],
            prim(["{"] ++ join(Es, ",") ++ ["}"]);
        list ->
            Es = [elem(bexpr(St, Depth + 1)) || _ <- lists:seq(1, u(3))],
            prim(["["] ++ join(Es, ",") ++ ["]"]);
        cons ->
            prim(["["] ++ elem(bexpr(St, Depth + 1)) ++ ["|"] ++ elem(bexpr(St, Depth + 1))
                 ++ ["]"]);
        map ->
            Fs = [[pick([atom(), headvar(St)]), "=>"] ++ elem(bexpr(St, Depth + 1))
                  || _ <- lists:seq(1, u(3) - 1)],
            prim(["#{"] ++ join(Fs, ",") ++ ["}"]);
        action -> action(St);
        obj -> prim([pick(["object", "bindings"]), "(", ")"]);
        test -> gtest(St, 2);
        nil -> prim(["[", "]"])
    end.

body_bin(St) ->
    case int_env_vars(St) of
        [] -> prim(bin_lit());
        L ->
            K = pick(L),
            prim(pick([["<<", K, ">>"], ["<<", K, ":", "8", ",", "\"ab\"", ">>"],
                       ["<<", "1", ",", K, ":", "16", ">>"]]))
    end.

action(St) ->
    V = fun() -> [headvar(St)] end,
    prim(case u(20) of
             1 -> ["message", "("] ++ V() ++ [")"];
             2 -> ["return_trace", "(", ")"];
             3 -> ["exception_trace", "(", ")"];
             4 -> ["process_dump", "(", ")"];
             5 -> ["enable_trace", "(", "send", ")"];
             6 -> ["enable_trace", "("] ++ V() ++ [",", "call", ")"];
             7 -> ["disable_trace", "(", "procs", ")"];
             8 -> ["disable_trace", "("] ++ V() ++ [",", "send", ")"];
             9 -> ["display", "("] ++ V() ++ [")"];
             10 -> ["caller", "(", ")"];
             11 -> ["set_tcw", "(", integer_to_list(u(20)), ")"];
             12 -> ["silent", "(", pick(["true", "false"]), ")"];
             13 -> ["trace", "(", "[", "send", "]", ",", "[", "]", ")"];
             14 -> ["trace", "("] ++ V() ++ [",", "[", "]", ",", "[", "call", "]", ")"];
             15 -> ["caller_line", "(", ")"];
             16 -> ["current_stacktrace", "(", ")"];
             17 -> ["current_stacktrace", "(", integer_to_list(u(5)), ")"];
             18 -> ["set_seq_token", "(", "label", ",", integer_to_list(u(9)), ")"];
             19 -> ["get_seq_token", "(", ")"];
             20 -> ["message", "(", "{", "caller", "(", ")", ",", "object", "(", ")", "}", ")"]
         end).

%% ---------------------------------------------------------------------------
%% Errors in guards and bodies
%% ---------------------------------------------------------------------------

nest_err(St, E) ->
    case u(6) of
        1 -> prim(["{"] ++ elem(E) ++ [","] ++ elem(gexpr(St, 3)) ++ ["}"]);
        2 -> prim(["["] ++ elem(gexpr(St, 3)) ++ [","] ++ elem(E) ++ ["]"]);
        3 -> opx(operand(E) ++ ["+"] ++ operand(gexpr(St, 3)));
        4 -> prim(["abs", "("] ++ elem(E) ++ [")"]);
        _ -> E
    end.

err_expr(St) ->
    V = headvar(St),
    case u(32) of
        1 -> prim([pick(["foo", "my_fun", "check", "'føø'"]), "(", V, ")"]);
        2 -> prim(["lists", ":", "member", "(", V, ",", "[", "]", ")"]);
        3 -> prim(["erlang", ":", pick(["ceil", "tuple_size", "garbage_collect"]), "(", V, ")"]);
        4 -> opx(["not", pick(["integer", "atom", "list"]), "(", V, ")"]);
        5 -> opx(["X9", "=", V]);
        6 -> prim(["case", V, "of", "_", "->", "true", "end"]);
        7 -> prim(["if", V, "->", "1", ";", "true", "->", "2", "end"]);
        8 -> prim([pick(["Unbound", "Q", "Zz"])]);
        9 -> prim([V, "#", "rec", ".", "f"]);
        10 -> prim(["is_record", "(", V, ",", "rec", ")"]);
        11 -> prim(["message", "(", V, ")"]);
        12 -> prim(["<<", V, ">>"]);
        13 -> prim([V, "#{", "a", "=>", "1", "}"]);
        14 -> prim(["[", "E", "||", "E", "<-", V, "]"]);
        15 -> opx(["catch", V]);
        16 -> prim(["fun", "(", ")", "->", V, "end"]);
        17 -> prim(["F", "(", V, ")"]);
        18 -> prim(["M", ":", "f", "(", V, ")"]);
        19 -> prim(["tuple_size", "(", V, ")"]);
        20 -> prim(["is_function", "(", V, ",", "2", ")"]);
        21 -> prim(["begin", V, "end"]);
        22 -> prim(["receive", "_", "->", V, "end"]);
        23 -> prim(["try", V, "catch", "_", "->", "0", "end"]);
        24 -> prim(["#", "rec", "{", "f", "=", V, "}"]);
        25 -> prim(["<<", "1", ",", V, ":", "8", ">>"]);
        26 -> prim(["erlang", ":", "'!'", "(", V, ",", V, ")"]);
        27 -> prim(["'mød'", ":", "f", "(", ")"]);
        28 -> prim(["fun", "foo", "/", "1"]);
        29 -> prim(["maybe", V, "end"]);
        30 -> prim(["object", "(", V, ")"]);
        31 -> prim(["<<", "(", V, "+", "1", ")", ">>"]);
        32 -> prim(["#{", "K", "=>", "1", "||", "K", "<-", V, "}"])
    end.
