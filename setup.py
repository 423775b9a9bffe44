"""The one thing pyproject.toml cannot declare: the optional C extension (kafkawire/native.py).

``optional=True``: where no C compiler is found the build goes on without it, and kafkawire runs
on its pure-Python twins of the same functions.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kafkawire._native", ["src/kafkawire/_native.c"], optional=True)])
