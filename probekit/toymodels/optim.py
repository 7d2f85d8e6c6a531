"""The optimiser of stacked members (``batched``): what ``loop.run`` does to one member, to each member of a stack
at once.  Gradients are clipped to norm 1 per member (``torch.nn.utils.clip_grad_norm_``'s arithmetic), and AdamW
(``torch.optim.AdamW``'s single-tensor update: decoupled weight decay, bias-corrected moments) steps each member at
its own learning rate and step count.  The moments move between the stack and each member's ``torch.optim.AdamW``
object (``member``, ``start``), whose ``state_dict`` the resume files hold."""

from __future__ import annotations

import torch

from . import stack_ops


def start(states) -> tuple[dict, dict]:
    """The stacked weights (leaves that require grad) and AdamW state of ``states`` (``batched._State``: each
    model and optimiser as built or restored from a resume file)."""
    params = {n: p.requires_grad_() for n, p in stack_ops.stack([s.model for s in states]).items()}
    group = states[0].opt.param_groups[0]
    named = [dict(s.model.named_parameters()) for s in states]
    moments = {which: {n: torch.stack([_moment(s.opt, mine[n], which) for s, mine in zip(states, named)])
                       for n in params} for which in ("exp_avg", "exp_avg_sq")}
    return params, {**moments, "betas": group["betas"], "eps": group["eps"], "weight_decay": group["weight_decay"]}


def _moment(opt, param, which: str) -> torch.Tensor:
    found = opt.state.get(param, {}).get(which)
    return found.detach() if found is not None else torch.zeros_like(param.detach())


def _shape(p: torch.Tensor) -> tuple:
    return (p.shape[0],) + (1,) * (p.dim() - 1)


@torch.no_grad()
def clip(params: dict, max_norm: float) -> None:
    """Scale each member's gradients so that their norm over all its parameters is at most ``max_norm``."""
    norms = torch.stack([torch.linalg.vector_norm(p.grad.reshape(len(p), -1), dim=1) for p in params.values()])
    coef = (max_norm / (torch.linalg.vector_norm(norms, dim=0) + 1e-6)).clamp(max=1.0)
    for p in params.values():
        p.grad.mul_(coef.view(_shape(p)))


@torch.no_grad()
def step(params: dict, adam: dict, lrs: list[float], steps: list[int]) -> None:
    """One AdamW step of every member: member i at learning rate ``lrs[i]``, its ``steps[i]``-th step."""
    (b1, b2), eps, wd = adam["betas"], adam["eps"], adam["weight_decay"]
    device = next(iter(params.values())).device
    vec = lambda xs: torch.tensor(xs, dtype=torch.float32, device=device)
    decay = vec([1 - lr * wd for lr in lrs])
    step_size = vec([lr / (1 - b1 ** k) for lr, k in zip(lrs, steps)])
    bc2 = vec([(1 - b2 ** k) ** 0.5 for k in steps])
    for n, p in params.items():
        g, m, v, shape = p.grad, adam["exp_avg"][n], adam["exp_avg_sq"][n], _shape(p)
        p.mul_(decay.view(shape))
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (v.sqrt() / bc2.view(shape)).add_(eps)
        p.sub_(step_size.view(shape) * m / denom)


def member(params: dict, adam: dict, i: int, state, done: int):
    """``state``'s model with member ``i``'s weights, its optimiser with member ``i``'s moments after ``done``
    steps (as ``torch.optim.AdamW`` holds them); returns the model."""
    stack_ops.unstack(params, i, state.model)
    for n, p in state.model.named_parameters():
        state.opt.state[p] = {"step": torch.tensor(float(done)), "exp_avg": adam["exp_avg"][n][i].clone(),
                              "exp_avg_sq": adam["exp_avg_sq"][n][i].clone()}
    return state.model


def keep(params: dict, adam: dict, rows: list[int]) -> tuple[dict, dict]:
    """The stack of the members ``rows`` only."""
    pick = lambda xs: {n: x[rows].detach().clone() for n, x in xs.items()}
    params = {n: p.requires_grad_() for n, p in pick(params).items()}
    return params, {**adam, "exp_avg": pick(adam["exp_avg"]), "exp_avg_sq": pick(adam["exp_avg_sq"])}
