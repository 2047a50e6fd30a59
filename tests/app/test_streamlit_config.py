"""The project's .streamlit/config.toml, as Streamlit itself reads it (a fresh process in the repository's root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from curation.config import PROJECT_ROOT

# What Streamlit makes of the project's config: the option's value and the path watcher a session would use.
READ_CONFIG = """
import json
from streamlit import config
from streamlit.watcher.path_watcher import get_default_path_watcher_class
print(json.dumps({"fileWatcherType": config.get_option("server.fileWatcherType"),
                  "watcher": get_default_path_watcher_class().__name__}))
"""


def _streamlit_config(cwd) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}  # the file alone decides
    out = subprocess.run([sys.executable, "-c", READ_CONFIG], cwd=cwd, env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_served_app_watches_no_files_so_not_the_store_or_the_models(tmp_path):
    # Streamlit's watcher subscribes to app.py's folder recursively, data/ and models/ included, whatever
    # folderWatchBlacklist says; only "none" keeps the store's and the trainers' writes out of it.
    assert _streamlit_config(PROJECT_ROOT) == {"fileWatcherType": "none", "watcher": "NoOpPathWatcher"}
    # Outside the project (no config.toml), Streamlit's default would watch: the check reads the project's file.
    assert _streamlit_config(tmp_path)["fileWatcherType"] == "auto"


def test_no_full_garbage_collection_after_every_script_run():
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    out = subprocess.run([sys.executable, "-c", "from streamlit import config; "
                          "print(config.get_option('runner.postScriptGC'))"],
                         cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False"
