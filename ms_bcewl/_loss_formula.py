"""The loss and its first-order gradients in MindSpore operators, written once (docs/contract.md §2, §4 and §9).

Every Python computation of the formula is taken from here: an export's loss (``_primitives.standard_loss``), the
bprops of the gradient primitives (second order), the Ascend path's composed gradients (``_ascend_kernels``) and
the reference of ``ms-bcewl check``. With x input, y target, w weight, p pos_weight (1 where absent), py = p y and
sp(v) = softplus(v) = log(1 + exp(v)) = -logsig(-v), per element:
    loss = w ((1 - y) sp(x) + py sp(-x))
    dx = w (a sigmoid(x) - py), a = 1 - y + py      dy = w (p sp(-x) - sp(x))      (w (-x) where p is absent)
    dw = (1 - y) sp(x) + py sp(-x)                   dp = w y sp(-x)
each gradient times the upstream gradient and the reduction's scale. No product as large as a x appears (it would
overflow float32 where the loss fits), and a factor that may be 0 meets a term that may be infinite only in
``product``, which gives the limit 0 there.

The functions compute in their arguments' dtype (the callers cast: float32, float64 for ``check``) with Select,
Abs, Exp, Sigmoid, log1p, comparisons and arithmetic. With ``exportable_log1p``, made of Log, the loss uses only
operators that MINDIR and ONNX opset 11 carry and whose NaN and ±inf give the same results in MindSpore's CPU
kernels and in onnxruntime (§17): Softplus, Maximum and ReLU turn a NaN into a number in MindSpore and not in
onnxruntime, and opset 11 has no Log1p, IsInf or IsNan. With ``ops.log1p`` every function is one MindSpore
differentiates accurately, so that the bprops built from them can be differentiated again.
"""
from mindspore import ops

_FLOAT32_MAX = 3.4028235e38
# A primitive rather than ops.zeros_like, which branches on its dtype argument (target_term says why that matters).
_zeros_like = ops.ZerosLike()


def exportable_log1p(t):
    """log1p(t) for t in [0, 1] from Log: log(u) * t / (u - 1) with u = 1 + t, within a few roundings of log1p(t)
    where u - 1 is not t (Goldberg's formula), and t itself where u rounds to 1. NaN gives NaN. ONNX opset 11 has
    no Log1p. Not for autodiff: its derivative through the rounding of u - 1 is wrong."""
    u = 1.0 + t
    return ops.select(u == 1.0, t, ops.log(u) * (t / (u - 1.0)))


def _positive_part(v, magnitude):
    """max(v, 0) as 0.5 v + 0.5 |v|, which MindSpore differentiates to 1/2 at 0 (|v|'s derivative is 0 there) as
    softplus' derivative sigmoid(0), and whose halves do not overflow; 0 at -inf, NaN at NaN."""
    return ops.select(v < 0.0, _zeros_like(v), 0.5 * v + 0.5 * magnitude)


def softplus_pair(x, log1p=ops.log1p):
    """(sp(x), sp(-x)) = (max(x, 0) + l, max(-x, 0) + l) with l = log1p(exp(-|x|)): finite for every finite x,
    +inf and 0 at ±inf, NaN at NaN."""
    magnitude = ops.abs(x)
    shared = log1p(ops.exp(-magnitude))
    return _positive_part(x, magnitude) + shared, _positive_part(-x, magnitude) + shared


def product(factor, term):
    """factor * term (a tensor), but 0 where a zero factor meets an infinite term (§9); NaN stays NaN, and elsewhere
    the product and its derivatives are the plain ones. The test for an infinite term holds in float32 and float64:
    there a zero factor gives 0 with any term beyond float32's range. No branch (``target_term`` says why)."""
    plain = factor * term
    zero_limit = ops.logical_and(factor == 0.0, ops.abs(term) > _FLOAT32_MAX)
    return ops.select(zero_limit, _zeros_like(plain), plain)


def positives(y, p):
    """py, the share of the positive term: y where pos_weight is absent (None)."""
    return y if p is None else p * y


def unweighted_loss(y, py, softplus_x, softplus_minus_x):
    """(1 - y) sp(x) + py sp(-x): the loss without its weight, and dw's term."""
    return product(1.0 - y, softplus_x) + product(py, softplus_minus_x)


def input_term(y, py, sigmoid_x):
    """dx without its factor w: a sigmoid(x) - py."""
    return (1.0 - y + py) * sigmoid_x - py


def target_term(p, softplus_x, softplus_minus_x):
    """dy without its factor w: p sp(-x) - sp(x), a difference without inf - inf at x = ±inf. Where pos_weight is
    absent it is -x (``first_order_terms``). No branch, as in every function the Ascend path's bprop calls: the bprop
    of that bprop reaches them too, and MindSpore 2.10 fails to compile a branching function reached from both
    ("The func graph is empty")."""
    return product(p, softplus_minus_x) - softplus_x


def pos_weight_term(y, softplus_minus_x):
    """dp without its factor w: y sp(-x)."""
    return product(y, softplus_minus_x)


def loss(x, y, w, p, log1p=ops.log1p):
    """The elementwise loss; w and p None where absent."""
    softplus_x, softplus_minus_x = softplus_pair(x, log1p)
    unweighted = unweighted_loss(y, positives(y, p), softplus_x, softplus_minus_x)
    return unweighted if w is None else product(w, unweighted)


def input_gradient(x, y, w, p):
    """dx for an upstream gradient of 1 and no reduction; w and p None where absent."""
    unit = input_term(y, positives(y, p), ops.sigmoid(x))
    return unit if w is None else product(w, unit)


def first_order_terms(x, y, p):
    """The gradients' terms without their factors w (dw: none) and g s, and the pieces their derivatives take:
    (dx, dy, dp, dw terms, sigmoid(x), sigmoid(-x), sp(-x)). A tuple, not an object: graphs compile tuples."""
    softplus_x, softplus_minus_x = softplus_pair(x)
    sigmoid_x = ops.sigmoid(x)
    sigmoid_minus_x = ops.sigmoid(-x)  # 1 - sigmoid(x) with full precision where sigmoid(x) is near 1
    py = positives(y, p)
    return (input_term(y, py, sigmoid_x), -x if p is None else target_term(p, softplus_x, softplus_minus_x),
            pos_weight_term(y, softplus_minus_x), unweighted_loss(y, py, softplus_x, softplus_minus_x),
            sigmoid_x, sigmoid_minus_x, softplus_minus_x)


def second_derivatives(y, p, sigmoid_x, sigmoid_minus_x):
    """The derivatives of the terms of ``first_order_terms`` that are not terms themselves: (d dx/dx, d dy/dx,
    d dp/dx = d dx/dp, d dx/dy). The others: d dy/dp = d dp/dy = sp(-x); d dw/dx, d dw/dy, d dw/dp are the dx, dy
    and dp terms; d dy/dy, d dp/dp and d dw/dw are 0."""
    along_x = (1.0 - y + positives(y, p)) * sigmoid_x * sigmoid_minus_x
    target_along_x = -1.0 if p is None else -1.0 - (p - 1.0) * sigmoid_minus_x
    pos_weight_along_x = -y * sigmoid_minus_x
    input_along_y = -1.0 if p is None else -(p * sigmoid_minus_x + sigmoid_x)
    return along_x, target_along_x, pos_weight_along_x, input_along_y
