"""Bprops of the gradient primitives, so that gradients of gradients are real (docs/contract.md, "Second-order
gradients").

With x input, y target, w weight, p pos_weight (1 where absent), g the loss's upstream gradient, s = 1/numel(x) for
mean and 1 otherwise, a = 1 + (p - 1) y and logsig(x) = log(sigmoid(x)), the first-order gradients are, per element
and before dw and dp are summed to the shapes of w and p:
    dx = w (a sigmoid(x) - p y) g s        dy = w (-x - (p - 1) logsig(x)) g s
    dw = ((1 - y) x - a logsig(x)) g s     dp = -w y logsig(x) g s
A gradient primitive's bprop gets a cotangent c for its output and returns the gradient of sum(c * output) with
respect to each of its inputs (g, x, y, w, p). They are written with MindSpore's differentiable operations, in
float32 like the loss, so that third and higher orders follow by MindSpore's own autodiff.
"""
import mindspore as ms
from mindspore import ops

_OUTPUTS = ("input", "target", "weight", "pos_weight")


def _log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) with min(x, 0) as (x - |x|) / 2 where x <= 0: its derivative
    as MindSpore differentiates it is sigmoid(-x) at every x, 0 included (where |x|'s derivative is 0), and it is 0,
    not inf - inf, at x = +inf."""
    return ops.where(x > 0, ops.zeros_like(x), 0.5 * (x - ops.abs(x))) - ops.log1p(ops.exp(-ops.abs(x)))


def _float32(tensor):
    return None if tensor is None else ops.cast(tensor, ms.float32)


def _product(factor, term):
    """factor * term, but 0 where a zero factor meets an infinite term (the limit, docs/contract.md "Infinities and
    NaN"). Only there: elsewhere the product and its derivatives are the plain ones."""
    product = factor * term
    if not isinstance(term, ms.Tensor):  # a finite constant
        return product
    return ops.where(ops.logical_and(factor == 0, ops.isinf(term)), ops.zeros_like(product), product)


def _times(cotangent, term):
    """cotangent * term; None (a zero) where no cotangent was given."""
    return None if cotangent is None else _product(cotangent, term)


def _weighted(factor, term):
    """factor * term, where an absent factor (a weight not passed, None) is 1 and an absent term stays absent."""
    return term if factor is None or term is None else _product(factor, term)


def _total(*terms):
    """The sum of the terms present; None if none is."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


def _elementwise_terms(x, y, p):
    """The elementwise pieces of the first-order gradients and of their derivatives, in float32: sigmoid(x),
    sigmoid(-x), logsig(x), a, then unit_dx, unit_dy, unit_dp (dx, dy and dp without their factor w g s) and
    dw_term (dw's elementwise term without g s). A tuple, not an object: graphs compile tuples."""
    sigmoid = ops.sigmoid(x)
    sigmoid_of_minus_x = ops.sigmoid(-x)  # 1 - sigmoid(x) with full precision where sigmoid(x) is near 1
    log_sigmoid, log_sigmoid_of_minus_x = _log_sigmoid(x), _log_sigmoid(-x)
    p_y = y if p is None else p * y
    a = 1.0 - y + p_y  # 1 + (p - 1) y
    unit_dx = a * sigmoid - p_y
    # x = logsig(x) - logsig(-x) turns dy and the loss into sums without inf - inf at x = +-inf
    unit_dy = -x if p is None else log_sigmoid_of_minus_x - _product(p, log_sigmoid)
    dw_term = -_product(1.0 - y, log_sigmoid_of_minus_x) - _product(p_y, log_sigmoid)
    return sigmoid, sigmoid_of_minus_x, log_sigmoid, a, unit_dx, unit_dy, -_product(y, log_sigmoid), dw_term


def _sum_to(tensor, like):
    """The gradient of a tensor broadcast from `like`'s shape: summed over the broadcast dimensions (None stays)."""
    if tensor is None or tensor.shape == like.shape:
        return tensor
    return tensor.sum_to_size(like.shape)


def second_order(reduction, arguments, cotangents):
    """Gradients of sum_k sum(c_k * d_k), d_k the first-order gradient of argument k of the loss, with respect to
    each input of a gradient primitive.

    arguments: (dout, input, target, weight or None, pos_weight or None) as the primitive takes them;
    cotangents: (c_input, c_target, c_weight, c_pos_weight), None for a gradient not asked for.
    Returns the gradients of dout, input, target and the weights present, each in its argument's dtype."""
    dout, x, y, w, p = arguments
    c_x, c_y, c_w, c_p = (_float32(cotangents[0]), _float32(cotangents[1]), _float32(cotangents[2]),
                          _float32(cotangents[3]))
    xf, yf, wf, pf = _float32(x), _float32(y), _float32(w), _float32(p)
    sigmoid, sigmoid_of_minus_x, log_sigmoid, a, unit_dx, unit_dy, unit_dp, dw_term = _elementwise_terms(xf, yf, pf)
    scale = 1.0 / max(x.size, 1) if reduction == "mean" else 1.0
    gs = _float32(dout) * scale

    # Q = sum_k c_k d_k / (g s), elementwise: d(output)/d(dout) is Q s, summed for a 0-d dout
    weighted = _total(_times(c_x, unit_dx), _times(c_y, unit_dy), _times(c_p, unit_dp))
    q = _total(_weighted(wf, weighted), _times(c_w, dw_term))
    d_dout = q * scale if reduction == "none" else q.sum() * scale

    d_unit_dx_dx = a * sigmoid * sigmoid_of_minus_x
    d_unit_dy_dx = -1.0 if pf is None else -1.0 - (pf - 1.0) * sigmoid_of_minus_x
    d_unit_dp_dx = -yf * sigmoid_of_minus_x  # also d(unit_dx)/dp
    along_x = _total(_times(c_x, d_unit_dx_dx), _times(c_y, d_unit_dy_dx), _times(c_p, d_unit_dp_dx))
    d_x = _weighted(gs, _total(_weighted(wf, along_x), _times(c_w, unit_dx)))  # d(dw)/dx = unit_dx

    d_unit_dx_dy = -1.0 if pf is None else -(pf * sigmoid_of_minus_x + sigmoid)
    along_y = _total(_times(c_x, d_unit_dx_dy), _times(c_p, -log_sigmoid))
    d_y = _weighted(gs, _total(_weighted(wf, along_y), _times(c_w, unit_dy)))  # d(dw)/dy = unit_dy

    grads = (_as_gradient(d_dout, dout), _as_gradient(d_x, x), _as_gradient(d_y, y))
    if w is not None:
        grads = grads + (_as_gradient(_sum_to(_weighted(gs, weighted), w), w),)
    if p is not None:
        along_p = _total(_times(c_x, d_unit_dp_dx), _times(c_y, -log_sigmoid))
        grads = grads + (_as_gradient(_sum_to(_weighted(gs, _total(_weighted(wf, along_p),
                                                                      _times(c_w, unit_dp))), p), p),)
    return grads


def _as_gradient(gradient, argument):
    """A gradient in its argument's dtype; None (no cotangent reaches the argument: d(dy)/dy, d(dw)/dw and
    d(dp)/dp are 0) as zeros."""
    return ops.zeros_like(argument) if gradient is None else ops.cast(gradient, argument.dtype)


def _pick(cotangent, position):
    """A bprop's cotangent for one output: None (not an output), the whole cotangent (-1) or its item `position`."""
    if position is None:
        return None
    return cotangent if position == -1 else cotangent[position]


def gradient_bprop(reduction, has_weight, has_pos_weight, of=None):
    """The bprop of the gradient primitive whose output is the gradient of argument `of` ("input", "target",
    "weight", "pos_weight"), or, for of None, a tuple of the gradients of every argument present. Graphs need a
    bprop's parameters spelled out, hence one signature per variant."""
    present = [name for name, has in zip(_OUTPUTS, (True, True, has_weight, has_pos_weight)) if has]
    positions = tuple((present.index(name) if name in present else None) if of is None else
                      (-1 if name == of else None) for name in _OUTPUTS)

    def gradients(dout, x, y, w, p, cotangent):
        cotangents = (_pick(cotangent, positions[0]), _pick(cotangent, positions[1]),
                      _pick(cotangent, positions[2]), _pick(cotangent, positions[3]))
        return second_order(reduction, (dout, x, y, w, p), cotangents)

    if has_weight and has_pos_weight:
        def bprop_weight_pos_weight(dout, x, y, w, p, out, cotangent):
            return gradients(dout, x, y, w, p, cotangent)
        return bprop_weight_pos_weight
    if has_weight:
        def bprop_weight(dout, x, y, w, out, cotangent):
            return gradients(dout, x, y, w, None, cotangent)
        return bprop_weight
    if has_pos_weight:
        def bprop_pos_weight(dout, x, y, p, out, cotangent):
            return gradients(dout, x, y, None, p, cotangent)
        return bprop_pos_weight

    def bprop_plain(dout, x, y, out, cotangent):
        return gradients(dout, x, y, None, None, cotangent)
    return bprop_plain
