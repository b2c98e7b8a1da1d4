"""Shapes, parameter counts and FLOPs: what sweeps are planned with, without torch."""
from __future__ import annotations

import math

import pytest

from trainer.shapes import ModelShape, family_shape, flops_6nd, flops_detailed, shape_for


@pytest.mark.parametrize("width,layers", [(16, 1), (48, 2), (96, 3), (256, 8)])
def test_the_counts_are_those_of_the_torch_model(torch, width, layers):
    from trainer.model import GPT

    shape = ModelShape(width, layers)
    assert GPT(shape).count_params() == (shape.non_embedding_params, shape.total_params)


def test_a_target_size_picks_the_nearest_shape_of_one_family():
    for target in (2e4, 2e5, 1e6, 2.5e7):
        shape = shape_for(target)
        assert shape == family_shape(shape.d_model)  # one aspect ratio across a sweep
        neighbours = [family_shape(shape.d_model + step) for step in (-16, 16) if shape.d_model + step >= 16]
        gap = abs(math.log(shape.non_embedding_params / target))
        assert all(gap <= abs(math.log(n.non_embedding_params / target)) for n in neighbours)
    assert shape_for(2e5).n_heads == shape_for(2e5).d_model // 16
    with pytest.raises(ValueError, match="positive parameter count"):
        shape_for(0)


def test_flops_are_counted_both_ways():
    shape = ModelShape(64, 2)
    assert flops_6nd(1e6, 1e9) == 6e15
    extra_attention = 6 * shape.n_layers * shape.context * shape.d_model * 1000
    assert flops_detailed(shape, 1000) == pytest.approx(flops_6nd(shape.non_embedding_params, 1000) + extra_attention)
