#!/usr/bin/env python3
"""The virtual environment scripts/setup.sh makes: CUTLASS's C++ headers are there without the
Python packages only its kernel generator needs (scipy, cuda-python, ...: about 180 MB HeadLab
never loads)."""
import importlib.metadata as metadata
import re
import unittest


def name_of(requirement):
    return re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


class Venv(unittest.TestCase):
    def test_cutlass_headers_without_its_python_dependencies(self):
        try:
            cutlass = metadata.distribution("nvidia-cutlass")
        except metadata.PackageNotFoundError:
            self.skipTest("nvidia-cutlass is not in this environment (scripts/setup.sh installs it)")
        headers = [f for f in cutlass.files or [] if str(f).startswith("cutlass_library/source/include/cutlass/")]
        self.assertGreater(len(headers), 100, "the wheel's C++ headers (cmake/HeadlabCutlass.cmake) are missing")
        # What another installed package needs (its extras aside) may be here for it.
        needed = set()
        for dist in metadata.distributions():
            if (dist.metadata["Name"] or "").lower() == "nvidia-cutlass":
                continue
            needed |= {name_of(r) for r in dist.requires or [] if "extra ==" not in r}
        for requirement in cutlass.requires or []:
            name = name_of(requirement)
            if name in needed:
                continue
            with self.subTest(package=name):
                with self.assertRaises(metadata.PackageNotFoundError,
                                       msg=f"{name} is installed for nvidia-cutlass alone"):
                    metadata.distribution(name)


if __name__ == "__main__":
    unittest.main()
