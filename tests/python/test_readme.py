"""The README's Python example runs as shown."""

import re
from pathlib import Path


def test_readme_python_example_runs(capsys):
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "3 EL4132 INIT" in out
    assert "PerfMsmt 'Task Duration'" in out
    assert "'Channel 1/Value'" in out
