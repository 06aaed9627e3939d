"""Not part of the package: a guard for running Python from the clone's parent directory.

There, `import polytune` finds this directory (the clone, named polytune) before the installed package, since
the current directory comes first on sys.path; a directory without __init__.py would become an empty namespace
package and shadow the real one (a src/ layout would not help: the clone's directory is found all the same).
This file makes the clone's directory the real package: its modules are those of the package inside it.
"""
import os as _os

__path__ = [_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "polytune")]
with open(_os.path.join(__path__[0], "__init__.py"), encoding="utf-8") as _f:
    exec(compile(_f.read(), _f.name, "exec"))
