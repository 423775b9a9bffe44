"""The one thing pyproject.toml cannot declare: the optional C extension (kafkawire/native.py).

``optional=True``: where no C compiler is found the build goes on without it, and kafkawire runs
on its pure-Python twins of the same functions.
"""

from glob import glob

from setuptools import Extension, setup

# One translation unit: module.c includes the other files of native_c/ (one per mechanism).
PARTS = sorted(glob("src/kafkawire/native_c/*.c"))
setup(
    ext_modules=[
        Extension("kafkawire._native", ["src/kafkawire/native_c/module.c"], depends=PARTS, optional=True)
    ]
)
