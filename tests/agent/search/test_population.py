"""Islands keep their best, the archive keeps the best of each (complexity, constants) cell, and
migration carries each island's best to the next island."""
import numpy as np

from agent.search import Search, SearchConfig
from agent.search.population import Population
from agent.search.records import Candidate


def cand(id, score, island=0, complexity=10, n_constants=3):
    return Candidate(id=id, generation=0, lines=(f"loss = c{id}",), proposer="offline", status="ok",
                     island=island, score=score, complexity=complexity, n_constants=n_constants)


def filled(*cands, size=2, islands=2):
    population = Population(islands, size)
    by_id = {c.id: c for c in cands}
    for c in cands:
        population.place(c, by_id.__getitem__)
    return population, by_id.__getitem__


def test_an_island_keeps_only_its_best_candidates_best_first():
    population, _ = filled(cand(0, 1.0), cand(1, 3.0), cand(2, 2.0), cand(3, 9.0, island=1))
    assert population.islands == [[1, 2], [3]]


def test_the_archive_keeps_the_best_of_each_cell_so_simple_forms_stay_around():
    simple_weak, simple_better = cand(0, 1.0, complexity=5, n_constants=2), cand(1, 1.5, complexity=6, n_constants=2)
    rich = cand(2, 3.0, complexity=40, n_constants=6)
    population, _ = filled(simple_weak, simple_better, rich, size=1, islands=1)
    assert population.islands == [[2]]  # the island forgot the simple forms ...
    assert sorted(population.archive.values()) == [1, 2]  # ... the archive did not


def test_migration_carries_each_islands_best_to_the_next_island_in_a_ring():
    population, lookup = filled(cand(0, 5.0, island=0), cand(1, 1.0, island=1), cand(2, 2.0, island=1))
    population.migrate(lookup)
    assert population.islands == [[0, 2], [0, 2]]  # island 1 took 0 (and dropped 1); island 0 took 2


def test_parents_come_from_a_seeded_tournament_on_their_own_island():
    population, lookup = filled(cand(0, 1.0), cand(1, 2.0), cand(2, 9.0, island=1), size=5)
    parents = population.parents(0, np.random.default_rng(0), lookup)
    assert len(parents) == 3 and {p.island for p in parents} == {0}
    assert [p.id for p in parents] == [p.id for p in population.parents(0, np.random.default_rng(0), lookup)]
    assert population.parents(1, np.random.default_rng(0), lookup)[0].id == 2


def test_done_is_a_query_and_step_records_why_the_run_stopped(power_law_problem, power_law_data):
    search = Search(power_law_problem, power_law_data, SearchConfig(budget=0, time_limit=None))
    assert search.done and search.done
    assert search.stop_reason is None  # asking changed nothing
    assert search.step() == [] and search.stop_reason == "budget"
