"""my_stack: an ament_python package, built by colcon or installed with pip."""

from setuptools import find_packages, setup

PACKAGE = "my_stack"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", ["launch/follower.launch.py"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="A line follower for the Polaris, tested against the ACRES simulator",
    license="Apache-2.0",
    entry_points={"console_scripts": ["line_follower = my_stack.follower:main"]},
)
