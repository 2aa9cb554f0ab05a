%% @doc Resident tables: objects kept in Rust, selected by msc's compiled
%% match specs. The operations and answers of ets `set' and `bag' tables
%% (up to order where ets gives none), with selects many times faster.
%%
%% A table is a reference: it lives while any process holds it, and is
%% freed when none does. Any number of processes read at once; writers lock
%% one shard of the table for one object. Calls that scan the table or take
%% long lists run on dirty schedulers, so none holds a normal scheduler for
%% more than about a millisecond; a select on a small table, or a select/3
%% chunk, starts on the normal one and moves to a dirty one as soon as it
%% has looked at 16,384 rows or built 4,096 terms of its answer.
%%
%% What ets promises under concurrency, msc_table keeps: insert/2 and
%% insert_new/2 of a list are atomic and isolated (a bad object inserts
%% none, and a concurrent select, lookup, match_object, tab2list or
%% select/3 chunk sees all of the list or none of it); select_delete/2 and
%% select_replace/2 are atomic per object. And more: every traversal is
%% safe, fixed or not. A select/3 continuation returns each object that
%% stays in the table exactly once, however other processes insert and
%% delete meanwhile (ets guarantees that only with safe_fixtable/2, which
%% msc_table takes for code that calls it).
%%
%% ```
%% 1> T = msc_table:new(users, [set]).
%% 2> msc_table:insert(T, [{ann, 150}, {bob, 20}]).
%% 3> msc_table:select(T, [{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]).
%% [ann]
%% '''
-module(msc_table).

-export([new/2, insert/2, insert_new/2, lookup/2, delete/2, delete_object/2,
         select/1, select/2, select/3, select_count/2, select_delete/2,
         select_replace/2, match_object/2, tab2list/1, info/2, safe_fixtable/2]).
-export_type([table/0, continuation/0]).

-opaque table() :: {msc_table, reference(), set | bag}.
-opaque continuation() :: {msc_table_select, table(), msc:compiled(),
                           non_neg_integer(), non_neg_integer(), pos_integer()}
                        | {msc_table_select, done}.

%% Tables larger than this are scanned, and lists longer than this
%% inserted, on a dirty scheduler: about a millisecond of work. A bag's
%% lookups and deletes go there too: one key may have any number of objects.
-define(DIRTY_ROWS, 2000).

%% The table's reference, or badarg (as ets raises for a bad table).
-define(REF(T), ref(T, ?FUNCTION_NAME, [T])).

%% @doc A new table. Options: `set' (the default) or `bag', `{keypos, N}',
%% and, accepted for ets compatibility and ignored (every msc table is
%% shared and concurrent): `public', `protected', `private',
%% `{read_concurrency, _}', `{write_concurrency, _}',
%% `{decentralized_counters, _}'. `Name' names nothing: the table is only
%% reached through the returned reference.
-spec new(atom(), [term()]) -> table().
new(Name, Options) when is_atom(Name), is_list(Options) ->
    {Type, Keypos} = options(Options, set, 1, {Name, Options}),
    {msc_table, msc_tracer:nif_table_new(Type, Keypos), Type};
new(Name, Options) ->
    erlang:error(badarg, [Name, Options]).

options([], Type, Keypos, _) -> {Type, Keypos};
options([set | T], _, K, A) -> options(T, set, K, A);
options([bag | T], _, K, A) -> options(T, bag, K, A);
options([{keypos, K} | T], Type, _, A) when is_integer(K), K >= 1 -> options(T, Type, K, A);
options([Access | T], Type, K, A) when Access =:= public; Access =:= protected; Access =:= private ->
    options(T, Type, K, A);
options([{Tune, B} | T], Type, K, A)
  when (Tune =:= read_concurrency orelse Tune =:= write_concurrency
        orelse Tune =:= decentralized_counters), is_boolean(B) orelse B =:= auto ->
    options(T, Type, K, A);
options(_, _, _, {Name, Options}) ->
    erlang:error(badarg, [Name, Options]).

%% @doc Inserts an object or a list of objects (tuples at least `keypos'
%% long); a set replaces the object with the same key. A bad object in a
%% list inserts none of them.
-spec insert(table(), tuple() | [tuple()]) -> true.
insert(T, Objects) when is_list(Objects) ->
    case shorter_than(Objects, ?DIRTY_ROWS) of
        true -> msc_tracer:nif_table_insert(?REF(T), Objects);
        false -> msc_tracer:nif_table_insert_dirty(?REF(T), Objects)
    end;
insert(T, Object) ->
    msc_tracer:nif_table_insert(?REF(T), Object).

%% @doc Inserts the objects only if none of their keys is in the table.
-spec insert_new(table(), tuple() | [tuple()]) -> boolean().
insert_new(T, Objects) when is_list(Objects) ->
    case shorter_than(Objects, ?DIRTY_ROWS) of
        true -> msc_tracer:nif_table_insert_new(?REF(T), Objects);
        false -> msc_tracer:nif_table_insert_new_dirty(?REF(T), Objects)
    end;
insert_new(T, Object) ->
    msc_tracer:nif_table_insert_new(?REF(T), Object).

%% @doc The objects with key `Key' (a bag's in insertion order).
-spec lookup(table(), term()) -> [tuple()].
lookup({msc_table, Ref, bag}, Key) ->
    msc_tracer:nif_table_lookup_dirty(Ref, Key);
lookup(T, Key) ->
    msc_tracer:nif_table_lookup(?REF(T), Key).

%% @doc Deletes the objects with key `Key'.
-spec delete(table(), term()) -> true.
delete({msc_table, Ref, bag}, Key) ->
    msc_tracer:nif_table_delete_dirty(Ref, Key);
delete(T, Key) ->
    msc_tracer:nif_table_delete(?REF(T), Key).

%% @doc Deletes the objects exactly equal to `Object'.
-spec delete_object(table(), tuple()) -> true.
delete_object({msc_table, Ref, bag}, Object) ->
    msc_tracer:nif_table_delete_object_dirty(Ref, Object);
delete_object(T, Object) ->
    msc_tracer:nif_table_delete_object(?REF(T), Object).

%% @doc The result of each object a clause of `Spec' matches. `Spec' is a
%% match spec, or one compiled by msc:compile/2,3 for `table' (compile
%% once, select many times).
-spec select(table(), term() | msc:compiled()) -> [term()].
select(T, Spec) ->
    Ref = ?REF(T),
    %% A small table's select runs here unless its answer is large: the
    %% NIF answers `dirty' once it has built too much of it.
    case large(Ref) orelse msc_tracer:nif_table_select(Ref, Spec) of
        true -> msc_tracer:nif_table_select_dirty(Ref, Spec);
        dirty -> msc_tracer:nif_table_select_dirty(Ref, Spec);
        Matches -> Matches
    end.

%% @doc At most `Limit' results, and a continuation for select/1, or
%% `'$end_of_table'' if there are none.
-spec select(table(), term() | msc:compiled(), pos_integer()) ->
    {[term()], continuation()} | '$end_of_table'.
select(T, Spec, Limit) when is_integer(Limit), Limit > 0 ->
    Compiled = case msc:compile(Spec, table) of
                   {ok, C} -> C;
                   {error, _} -> erlang:error(badarg, [T, Spec, Limit])
               end,
    chunk(T, Compiled, 0, 0, Limit);
select(T, Spec, Limit) ->
    erlang:error(badarg, [T, Spec, Limit]).

%% @doc The next chunk of a select/3.
-spec select(continuation() | '$end_of_table') -> {[term()], continuation()} | '$end_of_table'.
select({msc_table_select, T, Compiled, Shard, Slot, Limit}) ->
    chunk(T, Compiled, Shard, Slot, Limit);
select({msc_table_select, done}) ->
    '$end_of_table';
select('$end_of_table') ->
    '$end_of_table';
select(Other) ->
    erlang:error(badarg, [Other]).

%% A chunk runs on this scheduler when it is short, else (the NIF answers
%% `dirty' before it has looked at too many rows) whole on a dirty one.
chunk(T, Compiled, Shard, Slot, Limit) ->
    Ref = ?REF(T),
    Answer = case msc_tracer:nif_table_select_limit(Ref, Compiled, Shard, Slot, Limit) of
                 dirty -> msc_tracer:nif_table_select_limit_dirty(Ref, Compiled, Shard, Slot, Limit);
                 Done -> Done
             end,
    case Answer of
        {[], done} -> '$end_of_table';
        {Matches, done} -> {Matches, {msc_table_select, done}};
        {Matches, NextShard, NextSlot} ->
            {Matches, {msc_table_select, T, Compiled, NextShard, NextSlot, Limit}}
    end.

%% @doc How many objects `Spec' returns `true' for.
-spec select_count(table(), term() | msc:compiled()) -> non_neg_integer().
select_count(T, Spec) -> count(T, Spec, select_count).

%% @doc Deletes the objects `Spec' returns `true' for; how many.
-spec select_delete(table(), term() | msc:compiled()) -> non_neg_integer().
select_delete(T, Spec) -> count(T, Spec, select_delete).

%% @doc Replaces each object `Spec' matches with its result; how many. As
%% in ets, `Spec' must be a term whose every clause keeps the key, and the
%% table a set.
-spec select_replace(table(), term()) -> non_neg_integer().
select_replace(T, Spec) -> count(T, Spec, select_replace).

count(T, Spec, Op) ->
    Ref = ref(T, Op, [T, Spec]),
    case large(Ref) of
        false -> msc_tracer:nif_table_count(Ref, Spec, Op);
        true -> msc_tracer:nif_table_count_dirty(Ref, Spec, Op)
    end.

%% @doc The objects matching `Pattern' (`_' and `$N' match anything).
-spec match_object(table(), term()) -> [tuple()].
match_object(T, Pattern) ->
    select(T, [{Pattern, [], ['$_']}]).

%% @doc Every object.
-spec tab2list(table()) -> [tuple()].
tab2list(T) ->
    msc_tracer:nif_table_to_list(?REF(T)).

%% @doc `size' (objects), `memory' (words, as ets counts), `type', `keypos',
%% and as ets answers them for safe_fixtable/2: `fixed', `safe_fixed' and
%% `safe_fixed_monotonic_time'.
-spec info(table(), size | memory | type | keypos | fixed | safe_fixed
                    | safe_fixed_monotonic_time) -> term().
info(T, Item) when Item =:= fixed; Item =:= safe_fixed; Item =:= safe_fixed_monotonic_time ->
    msc_tracer:nif_table_fixed(?REF(T), Item);
info(T, Item) ->
    msc_tracer:nif_table_info(?REF(T), Item).

%% @doc Fixes the table for the calling process (`true'), or releases one
%% fixation (`false'), counting as ets does; a process's fixations go when
%% it exits. Every msc_table traversal is safe already: this is here for
%% code written for ets, and changes only what info/2 reports.
-spec safe_fixtable(table(), boolean()) -> true.
safe_fixtable(T, Fix) when is_boolean(Fix) ->
    msc_tracer:nif_table_fix(ref(T, safe_fixtable, [T, Fix]), Fix,
                             erlang:monotonic_time(), erlang:timestamp());
safe_fixtable(T, Fix) ->
    erlang:error(badarg, [T, Fix]).

large(Ref) ->
    msc_tracer:nif_table_info(Ref, size) > ?DIRTY_ROWS.

ref({msc_table, Ref, _}, _, _) -> Ref;
ref(_, _Function, Args) -> erlang:error(badarg, Args).

shorter_than([_ | T], N) when N > 0 -> shorter_than(T, N - 1);
shorter_than([], _) -> true;
shorter_than(_, _) -> false.
