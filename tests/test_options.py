"""Each option is declared once, in linter/config.py's OPTIONS: the table reads the configuration file, makes the
flags of `dynlint check`, says where each setting came from (`--show-settings`) and is the README's table."""
import dataclasses
from pathlib import Path

import pytest

from conftest import write_tree
from dynlint import api, cli
from dynlint.linter.config import COMMAND_LINE, OPTIONS, Config, load_config, settings, with_options_table

README = Path(__file__).resolve().parent.parent / "README.md"
# a value of every option: as written in a configuration file, and as given to its flag (when it has one)
SAMPLES = {
    "select": ('["DYN1"]', ["--select", "DYN1"]),
    "extend-select": ('["DYN3"]', ["--extend-select", "DYN3"]),
    "ignore": ('["DYN201"]', ["--ignore", "DYN201"]),
    "extend-ignore": ('["DYN202"]', ["--extend-ignore", "DYN202"]),
    "fixable": ('["DYN3"]', ["--fixable", "DYN3"]),
    "extend-fixable": ('["DYN2"]', ["--extend-fixable", "DYN2"]),
    "unfixable": ('["DYN301"]', ["--unfixable", "DYN301"]),
    "per-file-ignores": ('{ "gen/*" = ["DYN1"] }', None),
    "extend-per-file-ignores": ('{ "gen/*" = ["DYN2"] }', None),
    "exclude": ('["gen"]', ["--exclude", "gen"]),
    "extend-exclude": ('["out"]', ["--extend-exclude", "out"]),
    "regions": ('"all"', ["--regions", "all"]),
    "compiled": ('["pkg.*:*.step"]', None),
    "preview": ("true", ["--preview"]),
    "ignore-noqa": ("true", ["--ignore-noqa"]),
    "torch-version": ('"2.12"', ["--torch-version", "2.12"]),
    "respect-gitignore": ("false", ["--no-respect-gitignore"]),
    "force-exclude": ("true", ["--force-exclude"]),
    "jobs": ("3", ["--jobs", "3"]),
    "max-file-size": ("2", ["--max-file-size", "2"]),
    "cache-dir": ('"cache"', ["--cache-dir", "cache"]),
    "verify.examples": ('["ex.py"]', None),
    "verify.device": ('"cpu"', ["--device", "cpu"]),
    "verify.timeout": ("5", ["--verify-timeout", "5"]),
    "verify.timing-processes": ("3", ["--timing-processes", "3"]),
    "verify.cluster": ('"ray"', ["--cluster", "ray://head:10001"]),
}


def test_the_readme_table_is_the_one_the_options_render():
    text = README.read_text(encoding="utf-8")
    assert with_options_table(text) == text, \
        "README.md's options table is stale: run `python -m dynlint.linter.config README.md`"


def test_every_setting_has_an_option_and_every_option_a_sample():
    fields = {f.name for f in dataclasses.fields(Config)} - {"root", "source", "origins"}
    assert {o.field for o in OPTIONS} == fields
    assert set(SAMPLES) == {o.key for o in OPTIONS}
    assert {o.key for o in OPTIONS if o.flags} == {key for key, (_, flag) in SAMPLES.items() if flag}


def _file(tmp_path, key, literal):
    table, _, name = key.rpartition(".")
    section = "[tool.dynlint.verify]" if table else "[tool.dynlint]"
    write_tree(tmp_path, {"pyproject.toml": f"{section}\n{name} = {literal}\n", "m.py": ""})


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.key)
def test_a_file_and_a_flag_set_each_option_and_say_so(tmp_path, monkeypatch, option):
    literal, flag = SAMPLES[option.key]
    _file(tmp_path, option.key, literal)
    from_file = load_config([str(tmp_path)], api.known_codes())
    assert from_file.origin(option.field) == str(tmp_path / "pyproject.toml")
    assert getattr(from_file, option.field) != option.default
    if flag:
        write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n"})
        monkeypatch.chdir(tmp_path)
        config = cli._configuration(cli.build_parser().parse_args(["check", ".", *flag]))
        assert config.origin(option.field) == COMMAND_LINE
        assert getattr(config, option.field) != getattr(Config(root=config.root), option.field)
        assert all(origin == "default" for _, _, origin in settings(config)
                   if origin != COMMAND_LINE), settings(config)


def test_a_flag_adds_to_the_files_list_or_replaces_it(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nignore = ['DYN1']\nextend-exclude = ['a']\n"})
    monkeypatch.chdir(tmp_path)
    config = cli._configuration(cli.build_parser().parse_args(
        ["check", ".", "--extend-ignore", "DYN2", "--extend-exclude", "b", "--select", "DYN2,DYN3",
         "--extend-select", "DYN1"]))
    assert (config.ignore, config.extend_exclude, config.select) == (("DYN1", "DYN2"), ("a", "b"),
                                                                     ("DYN2", "DYN3", "DYN1"))
    config = cli._configuration(cli.build_parser().parse_args(["check", ".", "--ignore", "DYN3"]))
    assert config.ignore == ("DYN3",) and config.origin("extend_exclude") == str(tmp_path / "pyproject.toml")


def test_the_cache_folder_of_a_file_stays_in_the_project_but_the_flag_is_the_users(tmp_path, monkeypatch):
    _file(tmp_path, "cache-dir", '"sub/cache"')
    assert load_config([str(tmp_path)], api.known_codes()).cache_dir == str(tmp_path / "sub" / "cache")
    monkeypatch.chdir(tmp_path)
    config = cli._configuration(cli.build_parser().parse_args(["check", ".", "--cache-dir", "/elsewhere"]))
    assert config.cache_dir == "/elsewhere"
