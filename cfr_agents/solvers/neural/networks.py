r"""The networks of neural CFR and the strategies read from them, for every infoset at once.

* The value (advantage) network :math:`V(I, a \mid \theta_p)` predicts player :math:`p`'s linearly
  weighted average of sampled regrets. Its strategy is regret matching on the predictions,
  :math:`\sigma(I,a) = V^+(I,a) / \sum_b V^+(I,b)`, over the legal actions. When no prediction is
  positive, it plays the legal action of largest prediction with probability 1, as Deep CFR does (Brown
  et al. 2019, section 4).
* The average-strategy network :math:`\Pi(I, a \mid \phi)` outputs logits, read as a softmax over the
  legal actions.

Both are multilayer perceptrons on the information-state tensors (:mod:`adapters.tensors`). Weights are
kept as named ``float32`` arrays (:func:`weights_of`, :func:`load_weights`), and so is Adam's state
(:func:`optimiser_state`, :func:`load_optimiser_state`): a checkpoint or a model file holds numbers only,
never pickled objects.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def torch_module() -> Any:
    """``torch``, or a one-line refusal naming the extra to install."""
    from adapters.inputs import require_extra

    return require_extra("torch", "nfsp", "neural CFR")


def mlp(inputs: int, hidden: Sequence[int], outputs: int, generator: Any) -> Any:
    """``inputs -> hidden... -> outputs`` with ReLU between layers, initialised from ``generator`` (a
    ``torch.Generator``), so that the same seed gives the same network."""
    torch = torch_module()
    sizes = [inputs, *hidden, outputs]
    layers: list[Any] = []
    for index, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes)):
        layer = torch.nn.Linear(fan_in, fan_out)
        bound = 1.0 / np.sqrt(fan_in)  # PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), seeded
        with torch.no_grad():
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
        layers.append(layer)
        if index < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def predict(network: Any, tensors: Any) -> FloatArray:
    """The network's outputs for a ``(N, D)`` ``torch`` tensor, as ``float64`` NumPy."""
    torch = torch_module()
    with torch.no_grad():
        outputs: FloatArray = network(tensors).double().numpy()
    return outputs


def regret_matching(advantages: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
    r""":math:`\sigma(I,a) = V^+(I,a) / \sum_b V^+(I,b)` on legal actions; the argmax where no
    :math:`V(I,a)` is positive (Deep CFR's rule)."""
    positive = np.where(mask, np.maximum(advantages, 0.0), 0.0)
    total = positive.sum(axis=1, keepdims=True)
    best = np.argmax(np.where(mask, advantages, -np.inf), axis=1)
    fallback = np.zeros_like(advantages)
    fallback[np.arange(len(best)), best] = 1.0
    strategy: FloatArray = np.where(total > 0.0, positive / np.where(total > 0.0, total, 1.0), fallback)
    return strategy


def softmax(logits: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
    r""":math:`\Pi(I,a) = e^{z_a} / \sum_{b \text{ legal}} e^{z_b}`, 0 on illegal actions."""
    shifted = np.where(mask, logits - np.max(np.where(mask, logits, -np.inf), axis=1, keepdims=True), -np.inf)
    weights = np.exp(shifted)
    strategy: FloatArray = weights / weights.sum(axis=1, keepdims=True)
    return strategy


def weights_of(network: Any, prefix: str) -> dict[str, NDArray[np.float32]]:
    """The network's parameters as named ``float32`` arrays (``prefix.0.weight``, ...)."""
    return {f"{prefix}.{name}": value.detach().numpy().copy() for name, value in network.state_dict().items()}


def load_weights(network: Any, arrays: Mapping[str, NDArray[np.float32]], prefix: str) -> None:
    """Set the network's parameters from :func:`weights_of`'s arrays; refuses missing or misshapen ones."""
    torch = torch_module()
    from adapters.inputs import InputError

    state = {}
    for name, value in network.state_dict().items():
        array = arrays.get(f"{prefix}.{name}")
        if array is None or tuple(array.shape) != tuple(value.shape):
            raise InputError(f"network weights {prefix}.{name} are missing or have another shape")
        state[name] = torch.from_numpy(np.asarray(array, dtype=np.float32).copy())
    network.load_state_dict(state)


def is_finite(network: Any) -> bool:
    """Whether every weight of the network is finite."""
    torch = torch_module()
    with torch.no_grad():
        return all(bool(torch.isfinite(parameter).all()) for parameter in network.parameters())


ADAM_STATE = ("step", "exp_avg", "exp_avg_sq")
"""What Adam keeps for each parameter: its step count :math:`k` and the moments :math:`m_k`, :math:`v_k`."""


def optimiser_state(optimiser: Any, prefix: str) -> dict[str, NDArray[Any]]:
    """Adam's state as named arrays, ``prefix.<k>.step``, ``.exp_avg`` and ``.exp_avg_sq`` for the ``k``-th
    parameter in the optimiser's order (float32, as torch keeps them)."""
    arrays: dict[str, NDArray[Any]] = {}
    for index, parameter in enumerate(optimiser.param_groups[0]["params"]):
        kept = optimiser.state[parameter]
        for name in ADAM_STATE:
            arrays[f"{prefix}.{index}.{name}"] = kept[name].detach().numpy().copy()
    return arrays


def load_optimiser_state(
    optimiser: Any, take: Callable[[str, type[np.generic], tuple[int, ...]], NDArray[Any]], prefix: str
) -> None:
    """Set Adam's state from :func:`optimiser_state`'s arrays, each got by ``take(name, dtype, shape)`` (which
    refuses a missing or misshapen one); refuses a step count or a moment that cannot be."""
    torch = torch_module()
    from adapters.inputs import InputError

    state: dict[int, dict[str, Any]] = {}
    for index, parameter in enumerate(optimiser.param_groups[0]["params"]):
        shapes = {"step": (), "exp_avg": tuple(parameter.shape), "exp_avg_sq": tuple(parameter.shape)}
        arrays = {name: take(f"{prefix}.{index}.{name}", np.float32, shapes[name]) for name in ADAM_STATE}
        if not all(np.isfinite(value).all() for value in arrays.values()) or arrays["step"] < 0:
            raise InputError(
                f"the state of {prefix} parameter {index} holds a value that is not finite, or a negative step"
            )
        if (arrays["exp_avg_sq"] < 0).any():
            raise InputError(f"the state of {prefix} parameter {index} holds a negative second moment")
        state[index] = {name: torch.from_numpy(np.array(value)) for name, value in arrays.items()}
    optimiser.load_state_dict({"state": state, "param_groups": optimiser.state_dict()["param_groups"]})
