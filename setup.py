"""Builds the extension kiln._kiln with Kiln's CMake build for `pip install .`.

The CMake build directory is $KILN_BUILD, or build/ in the source tree (the
one `bash .ci/example` and `bash .ci/test` use), so a tree that is already
built installs in seconds; a fresh one is configured and built first (it
needs the Debian packages of .ci/common.sh; `bash .ci/example` installs them).
"""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("KILN_BUILD", os.path.join(ROOT, "build"))
        jobs = os.environ.get("KILN_JOBS", "2")
        if not os.path.exists(os.path.join(build, "build.ninja")):
            subprocess.check_call(["cmake", "-G", "Ninja", "-S", ROOT, "-B", build,
                                   "-DCMAKE_BUILD_TYPE=Release"])
        subprocess.check_call(["ninja", "-C", build, "-j", jobs, "kiln-python"])
        built = os.path.join(build, "python", "kiln")
        name = next(f for f in os.listdir(built)
                    if f.startswith("_kiln.") and f.endswith(".so"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, name), target)


setup(ext_modules=[Extension("kiln._kiln", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
