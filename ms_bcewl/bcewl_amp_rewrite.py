"""Keeps MindSpore's rewrite (AMP O1's ``auto_mixed_precision``) from copying ms_bcewl's code into the network
it rewrites.

The rewrite converts every Cell it meets into generated source, and with it every function that Cell calls from a
package outside site-packages (a source checkout, an editable install), recursively; the copies lose the
module-level names they use (``NameError: name '_API' is not defined``). Under site-packages it calls them as they
are. Cells on the rewrite's black list are called as they are wherever the package lives.
"""
try:
    from mindspore.rewrite.common import namespace as _rewrite_namespace
except ImportError:  # a MindSpore without the rewrite has nothing to keep out of
    _rewrite_namespace = None


def keep_out_of_rewrite(*cells):
    """Adds the Cell classes to the rewrite's list of Cells it does not convert."""
    black_list = getattr(_rewrite_namespace, "_subtree_black_list", None)
    if black_list is None:
        return
    black_list.extend(cell for cell in cells if cell not in black_list)
