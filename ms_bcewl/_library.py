"""Locates the native library that ships inside this package; never looks in the working directory."""
from pathlib import Path

LIBRARY_DIR = Path(__file__).resolve().parent / "lib"
LIBRARY_PATH = LIBRARY_DIR / "libms_bcewl.so"


def library_path() -> str:
    """Absolute path of libms_bcewl.so, or ImportError saying how to build it."""
    if not LIBRARY_PATH.is_file():
        raise ImportError(
            f"ms_bcewl: the native library {LIBRARY_PATH} is missing. Install the package with "
            "'pip install .' from the source tree (it compiles the library with g++)."
        )
    return str(LIBRARY_PATH)

