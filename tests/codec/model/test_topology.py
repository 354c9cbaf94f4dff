"""The skeleton's topology: depths, levels, chains, subtrees, outline order, ancestors."""

from __future__ import annotations

import numpy as np

from codec.codecs.acl_style.optimizer import Hierarchy
from codec.formats import load_clip
from codec.model import topology
from codec.model.clip import Skeleton
from tests.codec.helpers import data_clip

#      0        4
#     / \
#    1   2
#   / \   \
#  3   6   5
PARENTS = np.array([-1, 0, 0, 1, -1, 2, 1])


def skeleton() -> Skeleton:
    return Skeleton.create([f"j{i}" for i in range(len(PARENTS))], PARENTS)


def test_depths_levels_and_the_longest_chain() -> None:
    sk = skeleton()
    assert sk.depths.tolist() == [0, 1, 1, 2, 0, 2, 2]
    assert [level.tolist() for level in sk.depth_levels()] == [[0, 4], [1, 2], [3, 5, 6]]
    assert sk.longest_chain() == 3
    assert topology.longest_chain(np.array([-1])) == 1
    assert topology.longest_chain(np.zeros(0, dtype=np.int64)) == 0


def test_children_chains_and_subtrees() -> None:
    sk = skeleton()
    assert sk.children(1).tolist() == [3, 6] and sk.children(3).tolist() == []
    assert sk.chains() == [[0], [0, 1], [0, 2], [0, 1, 3], [4], [0, 2, 5], [0, 1, 6]]
    assert sk.subtrees() == [[0, 1, 2, 3, 5, 6], [1, 3, 6], [2, 5], [3], [4], [5], [6]]


def test_hierarchy_order_is_an_outline() -> None:
    assert skeleton().hierarchy_order().tolist() == [0, 1, 3, 6, 2, 5, 4]


def test_with_ancestors_keeps_the_chain_above() -> None:
    sk = skeleton()
    assert np.flatnonzero(sk.with_ancestors([6])).tolist() == [0, 1, 6]
    mask = np.zeros(7, dtype=bool)
    mask[[5, 4]] = True
    assert np.flatnonzero(sk.with_ancestors(mask)).tolist() == [0, 2, 4, 5]
    assert not sk.with_ancestors([]).any()


def test_the_optimisers_tables_are_the_skeletons_topology() -> None:
    sk = load_clip(data_clip("cmu_13_07.acl.sjson")).skeleton
    h = Hierarchy.build(sk.parents)
    chains, subtrees = sk.chains(), sk.subtrees()
    for j in range(sk.num_joints):
        c = h.chain[h.chain_ptr[j] : h.chain_ptr[j + 1]]
        s = h.subtree[h.sub_ptr[j] : h.sub_ptr[j + 1]]
        assert c.tolist() == chains[j] and s.tolist() == subtrees[j]
    assert h.max_depth == sk.longest_chain()
